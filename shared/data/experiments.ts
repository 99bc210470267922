import type { ExposureRecord, ExposureStore, VariantTotals } from '../control/exposures.ts';
import { eachAtMost } from '../concurrency.ts';
import { Lru } from '../lru.ts';
import type { TableRef } from './client.ts';
import { EXPERIMENT_SHARDS, ExperimentTotals, ExperimentUser, Exposure } from './entities.ts';
import { addCount } from '../counts.ts';
import { nonZero, type Condition } from './expressions.ts';
import { serviceBusy } from './busy.ts';
import { GroupCommit } from './group-commit.ts';
import { applied, countEventOnce, EVENTS_PER_REQUEST_MAX, getRow, isNew, isStored, put, putAll, queryUpTo, remove, update, WRITE_BATCH, type TransactWrite } from './ops.ts';

/*
 * Experiment counting. A served request writes its exposure (found again by request_id when an
 * event names it), marks its user in the experiment the first time, and adds to one shard of its
 * variant's totals (a random one of EXPERIMENT_SHARDS partitions: no key takes every request of a
 * tenant). Concurrent requests of a container are written together (GroupCommit), each answered
 * once its group is stored; a request whose own writes failed fails alone, taken back (`write`).
 * An attributed event is recorded on its request's exposure under the event's id, conditionally,
 * so an event counts once however often its ingest is retried; the request's and the user's
 * first conversion per event type are told apart the same way.
 * A user's erasure deletes their rows in the tenant's experiments (forgetUser), and its sweep
 * again those a request served before it ended wrote after; a conversion attributed later to a
 * request served before it counts for the request, not the user (whose row is gone, and is not
 * written again by it).
 */

/** Exposures are kept this long after their attribution window closes. */
const EXPOSURE_GRACE_SECONDS = 86_400;

const shard = () => Math.floor(Math.random() * EXPERIMENT_SHARDS);

interface Pending {
  tenant: string;
  e: Parameters<ExposureStore['recordExposure']>[1];
}

/** Exposures written in one group at most. */
const GROUP_MAX = 100;

/** Members in the BatchWriteItems of their rows (`WRITE_BATCH` rows each, as `putAll` writes them). */
const batchesOf = (ks: readonly number[]): number[][] => Array.from({ length: Math.ceil(ks.length / WRITE_BATCH) }, (_, i) => ks.slice(i * WRITE_BATCH, (i + 1) * WRITE_BATCH));

/** The key of a user recorded in an experiment (`recorded`). */
const seenKeyOf = (tenant: string, e: Pending['e']): string => `${tenant}\u0000${e.experimentId}\u0000${e.userId}`;

/**
 * Users this container has recorded in an experiment already (tenant, experiment, user), with the
 * time of the latest request that did: their later requests skip the user row, so a returning
 * user's request costs two writes, not three; unless that request was served by the end of the
 * user's latest erasure (the request's `erasedThrough`), which deletes such a row: then it is
 * written again.
 * Bound: RECORDED_MAX entries, the least recently served let go (until 2026-12-07 emptied whole
 * when full: every returning user's next request wrote their membership row again).
 */
export const RECORDED_MAX = 100_000;
const recorded = new Lru<string, number>(RECORDED_MAX);

/**
 * A membership row's count of the requests other than the one that wrote it that found it there
 * and were served on it (`firstSeen`; a failed one takes its mark back).
 */
const SHARED = 'shared';
/** The membership row a request marked (`firstSeen`), as its mark's take-back finds it. */
type Marked = { first_served_at: unknown; variant: unknown };
/** How many deletes a failed request's take-back tries of the membership row it wrote (a mark on it taken back meanwhile: tried again). */
const TAKE_BACK_TRIES = 3;

/** DeleteItems of an erasure's membership rows in flight at once. */
const FORGET_CONCURRENCY = 16;

/** Attribute names of the totals (event types match ^[a-z][a-z0-9_]{0,63}$). */
const EVENTS = 'events:';
const CONVERTED_REQUESTS = 'requests_with:';
const CONVERTED_USERS = 'users_with:';

/** `eventsPerRequest`: EVENTS_PER_REQUEST_MAX unless a test asks for fewer. */
export function dynamoExposureStore(t: TableRef, opts: { eventsPerRequest?: number } = {}): ExposureStore {
  const eventsPerRequest = opts.eventsPerRequest ?? EVENTS_PER_REQUEST_MAX;
  const add = async (tenant: string, experimentId: number, variant: number, counts: Record<string, number>) => {
    const a = nonZero(counts);
    if (a) await update(t, ExperimentTotals.key({ tenant, experiment: experimentId, shard: shard(), variant }), { add: a });
  };

  /**
   * Whether the member's user is first seen in its experiment (their membership row written now),
   * and the row it marked as found there (SHARED: its first_served_at and variant, which the mark's
   * take-back holds to), if it did; the row is written unless this container recorded the user
   * already.
   */
  async function firstSeen({ tenant, e }: Pending): Promise<{ created: boolean; marked: Marked | undefined }> {
    const seenKey = seenKeyOf(tenant, e);
    const seenAt = recorded.get(seenKey);
    if (seenAt !== undefined && (e.erasedThrough === undefined || seenAt > e.erasedThrough)) return { created: false, marked: undefined };
    // The user's first request in the experiment creates the row; only that one counts the user.
    // Served after the user's erasure ended, a row first served by its end (a request served
    // as it ran wrote it, and the erasure's sweep deletes it) is replaced: a new membership.
    const ended = e.erasedThrough !== undefined && e.servedAt > e.erasedThrough ? e.erasedThrough : undefined;
    // With the end of the user's latest erasure as it read it, while it runs its start, and when
    // its marker could not be read the second before this request (see `attribute`).
    const through = e.erasedThrough === undefined ? undefined : Number.isFinite(e.erasedThrough) ? e.erasedThrough : (e.erasureBegan ?? e.servedAt - 1);
    const erasure = through !== undefined ? { erased_through: through } : {};
    const key = ExperimentUser.key({ tenant, experiment: e.experimentId, user_id: e.userId });
    const row = { ...key, variant: e.variant, first_served_at: e.servedAt, ...erasure };
    const creates = () => applied(() => put(t, row, ended === undefined ? isNew : (x) => x.or(isNew(x), x.cmp('first_served_at', '<=', ended))));
    let created = await creates();
    // The row was there: this request relies on it, and marks it (SHARED), so that the take-back of
    // the request that wrote it, failing in another container, leaves it (`write`). Gone before the
    // mark (taken back meanwhile): written now, as this request's own. A mark that failed otherwise
    // (refused for load) leaves the request served all the same, unmarked, as before. Until
    // 2026-12-07 such a take-back deleted the row, and the user, served here, was counted nowhere.
    let marked: Marked | undefined;
    if (!created) {
      let gone = false;
      try {
        gone = !(await applied(async () => {
          const now = await update(t, key, { add: { [SHARED]: 1 } }, { when: isStored, returnValues: 'ALL_NEW' });
          marked = { first_served_at: now?.first_served_at, variant: now?.variant };
        }));
      } catch {
        // Refused for load, or no answer: unmarked.
      }
      if (gone) created = await creates();
    }
    // Not when the erasure's end was unknown (Infinity: it runs, or its marker could not be
    // read): the write could not replace a row first served by that end.
    if (e.erasedThrough !== Number.POSITIVE_INFINITY) recorded.set(seenKey, Math.max(seenAt ?? 0, e.servedAt));
    return { created, marked };
  }

  /**
   * Writes the exposures of one group: their users first seen, then at once the rows and the totals
   * by variant (one UpdateItem per variant). Each member's failure is its own: rows whose group
   * write failed, or a variant's totals refused for load, are written again for each of its members
   * alone (totals that failed otherwise may have been added: their members fail), and only the
   * members whose own writes failed fail (until 2026-12-07 one failed write failed every request of
   * the group, other tenants' too, and kept what the others had written). A member that fails is
   * taken back: its exposure row is deleted, what it added to the totals subtracted, and the
   * membership row it wrote deleted, so that its retry (or the user's next request) counts the user.
   * What stays is what DynamoDB applied yet answered as failed, and a take-back that failed (a
   * subtraction that failed keeps the membership row too, as the user stays counted).
   */
  async function write(group: Pending[], stored: (k: number) => void): Promise<PromiseSettledResult<void>[]> {
    const failures = new Map<number, unknown>();
    const failEach = (members: readonly number[], outcomes: readonly PromiseSettledResult<unknown>[]) =>
      outcomes.forEach((o, i) => {
        if (o.status === 'rejected') failures.set(members[i] as number, o.reason);
      });

    const seen = await Promise.allSettled(group.map(firstSeen));
    failEach(
      group.map((_, k) => k),
      seen,
    );
    const created = seen.map((s) => s.status === 'fulfilled' && s.value.created);
    const marked = seen.map((s) => (s.status === 'fulfilled' ? s.value.marked : undefined));

    const rowOf = (k: number) => {
      const { tenant, e } = group[k] as Pending;
      return {
        ...Exposure.key({ tenant, request_id: e.requestId }),
        experiment_id: e.experimentId,
        variant: e.variant,
        user_id: e.userId,
        served_at: e.servedAt,
        attribute_until: e.servedAt + e.windowSeconds,
        ttl: e.servedAt + e.windowSeconds + EXPOSURE_GRACE_SECONDS,
      };
    };
    const members = group.flatMap((_, k) => (failures.has(k) ? [] : [k]));
    const byVariant = new Map<string, number[]>();
    for (const k of members) {
      const { tenant, e } = group[k] as Pending;
      const key = `${tenant}\u0000${e.experimentId}\u0000${e.variant}`;
      byVariant.set(key, [...(byVariant.get(key) ?? []), k]);
    }
    const addFor = (ks: readonly number[], sign = 1) => {
      const { tenant, e } = group[ks[0] as number] as Pending;
      return add(tenant, e.experimentId, e.variant, { requests: sign * ks.length, users: sign * ks.filter((k) => created[k]).length });
    };
    // Members whose requests (and users) the totals hold.
    const added = new Set<number>();
    const addAll = async (ks: number[]) => {
      const whole = await addFor(ks).then(
        (): PromiseSettledResult<void> => ({ status: 'fulfilled', value: undefined }),
        (reason: unknown): PromiseSettledResult<void> => ({ status: 'rejected', reason }),
      );
      // A variant whose totals were refused for load (nothing added) is added again request by
      // request. Any other failure may have been applied (a timeout, an InternalServerError): added
      // again it would count every member twice, so its members fail, not subtracted (kept: rare).
      const retry = whole.status === 'rejected' && serviceBusy(whole.reason);
      const outcomes = retry ? await Promise.allSettled(ks.map((k) => addFor([k]))) : ks.map(() => whole);
      outcomes.forEach((o, i) => {
        if (o.status === 'fulfilled') added.add(ks[i] as number);
      });
      failEach(ks, outcomes);
    };
    await Promise.all([
      // A batch (25 rows) that failed is written again row by row (a put is the same whenever
      // repeated); the batches stored are not (until 2026-12-07 one failed batch put every row of
      // the group again, up to 100 PutItems).
      ...batchesOf(members).map((ks) => putAll(t, ks.map(rowOf)).catch(async () => failEach(ks, await Promise.allSettled(ks.map((k) => put(t, rowOf(k))))))),
      ...[...byVariant.values()].map(addAll),
    ]);

    // Take-backs, for the members that failed: their exposure rows, what they added to the totals,
    // and the membership rows they wrote (unless the totals keep their user). A membership row that
    // a request of the same user in the group, served, shares (its own put found the row written)
    // stays, with the user in the totals: only the failed request is subtracted (or, its totals not
    // added, the user added; failing that, the row goes as any other). Until 2026-12-07
    // the row was deleted and the user subtracted, uncounted though served.
    const failed = [...failures.keys()];
    // The members served are answered now, not after the take-backs of the others (which, on a
    // table refusing writes for load, can take seconds: until 2026-12-07 they held every request of
    // the group, past its deadline too). The failed ones wait for theirs, and the next group too.
    group.forEach((_, k) => {
      if (!failures.has(k)) stored(k);
    });
    const sharedBy = (k: number) => {
      const { tenant, e } = group[k] as Pending;
      return group.some((m, j) => j !== k && !failures.has(j) && m.tenant === tenant && m.e.experimentId === e.experimentId && m.e.userId === e.userId && m.e.variant === e.variant);
    };
    const kept = new Set<number>();
    await Promise.all(
      failed.map(async (k) => {
        const { tenant, e } = group[k] as Pending;
        if (seen[k]?.status === 'fulfilled') await remove(t, Exposure.key({ tenant, request_id: e.requestId })).catch(() => undefined);
        if (!added.has(k)) {
          // Not in the totals: the user its row marks is counted now, for the request served.
          if (created[k] && sharedBy(k))
            await add(tenant, e.experimentId, e.variant, { users: 1 }).then(
              () => kept.add(k),
              () => undefined,
            );
          return;
        }
        if (created[k] && sharedBy(k)) {
          kept.add(k);
          await add(tenant, e.experimentId, e.variant, { requests: -1 }).catch(() => undefined);
        } else await addFor([k], -1).catch(() => kept.add(k));
      }),
    );
    // Failed requests that found a row take their marks back (they rely on it no more), before the
    // rows are deleted. A row another request (another container's) served on it marks stays,
    // and its user, not in the totals by the failed request that wrote it, is counted for that one.
    await Promise.all(
      failed.map(async (k) => {
        const on = marked[k];
        if (!on) return;
        const { tenant, e } = group[k] as Pending;
        // Off the row it marked only: one written since (the user's erasure deleted that one, and a
        // request served after it wrote a new one) holds others' marks (until 2026-12-07 it took one).
        const itsRow: Condition = (x) => x.and(isStored(x), x.eq('first_served_at', on.first_served_at), x.eq('variant', on.variant));
        await applied(() => update(t, ExperimentUser.key({ tenant, experiment: e.experimentId, user_id: e.userId }), { add: { [SHARED]: -1 } }, { when: itsRow })).catch(() => undefined);
      }),
    );
    await Promise.all(
      failed.map(async (k) => {
        if (!created[k] || kept.has(k)) return;
        const { tenant, e } = group[k] as Pending;
        recorded.delete(seenKeyOf(tenant, e));
        const key = ExperimentUser.key({ tenant, experiment: e.experimentId, user_id: e.userId });
        try {
          const unshared: Condition = (x) => x.or(x.absent(SHARED), x.cmp(SHARED, '<=', 0));
          // A row read unmarked after its delete was refused for a mark (taken back since: that
          // request failed too) is deleted again; left, it held a user no request counted.
          for (let tries = 0; tries < TAKE_BACK_TRIES; tries++) {
            if (await applied(() => remove(t, key, (x) => x.and(x.eq('first_served_at', e.servedAt), x.eq('variant', e.variant), unshared(x))))) return;
            const row = await getRow(t, key, { consistent: true });
            if (row?.first_served_at !== e.servedAt || row.variant !== e.variant) return;
            if (Number(row[SHARED]) > 0) {
              await add(tenant, e.experimentId, e.variant, { users: 1 });
              return;
            }
          }
        } catch {
          // Left as it is (a take-back that failed: see above).
        }
      }),
    );
    return group.map((_, k) => (failures.has(k) ? { status: 'rejected', reason: failures.get(k) } : { status: 'fulfilled', value: undefined }));
  }
  const commits = new GroupCommit<Pending>(write, GROUP_MAX);

  return {
    recordExposure: (tenant, e) => commits.add({ tenant, e }),

    async exposure(tenant, requestId) {
      const r = await getRow(t, Exposure.key({ tenant, request_id: requestId }), { consistent: true });
      if (!r) return undefined;
      return {
        requestId,
        experimentId: Number(r.experiment_id),
        variant: Number(r.variant),
        userId: String(r.user_id),
        servedAt: Number(r.served_at),
        attributeUntil: Number(r.attribute_until),
      } satisfies ExposureRecord;
    },

    async forgetRequest(tenant, requestId) {
      const key = Exposure.key({ tenant, request_id: requestId });
      const row = await getRow(t, key, { consistent: true });
      // Only the take-back that deletes the row subtracts the request.
      if (!row || !(await applied(() => remove(t, key, isStored)))) return;
      await add(tenant, Number(row.experiment_id), Number(row.variant), { requests: -1 });
    },

    attribute(tenant, x, event) {
      const convertedAt = `converted:${event.type}`;
      const userKey = ExperimentUser.key({ tenant, experiment: x.experimentId, user_id: x.userId });
      // Counted on the request's exposure once, in one transaction with the event's mark there
      // (ops.ts countEventOnce): all of it written, or none, whatever cut the ingest off.
      return countEventOnce(t, Exposure.key({ tenant, request_id: x.requestId }), event, convertedAt, eventsPerRequest, async (firstForRequest) => {
        // The user's first conversion of the type: only on their row, if it is there. An erasure
        // deleted it (the exposure stays until it expires): the event counts for its request, the
        // user no longer counts, and no row is written back that holds their id without a membership.
        // Nor on a row of a membership begun after (or while) an erasure that came after this
        // request was served: the row names that erasure's end (or, written while it ran, its
        // start; written when the user's marker could not be read, the second before its first
        // request). Until 2026-12-04 the new member counted. Read here, held by the write's
        // condition: a change meanwhile refuses the transaction, and countEventOnce reads again.
        const user = await getRow(t, userKey, { consistent: true });
        const erasedAfter = user?.erased_through !== undefined && !(Number(user.erased_through) < x.servedAt);
        const firstForUser = user !== undefined && !erasedAfter && user[convertedAt] === undefined;
        const counts = {
          [EVENTS + event.type]: 1,
          ...(firstForRequest ? { [CONVERTED_REQUESTS + event.type]: 1 } : {}),
          ...(firstForUser ? { [CONVERTED_USERS + event.type]: 1 } : {}),
        };
        const writes: TransactWrite[] = [{ update: ExperimentTotals.key({ tenant, experiment: x.experimentId, shard: shard(), variant: x.variant }), change: { add: counts } }];
        if (firstForUser) {
          writes.push({
            update: userKey,
            change: { setIfAbsent: { [convertedAt]: event.created } },
            when: (w) => w.and(isStored(w), w.absent(convertedAt), w.or(w.absent('erased_through'), w.cmp('erased_through', '<', x.servedAt))),
          });
        }
        return writes;
      });
    },

    async forgetUser(tenant, userId, experimentIds, servedThrough) {
      const when: Condition | undefined = servedThrough === undefined ? undefined : (x) => x.cmp('first_served_at', '<=', servedThrough);
      // A row that is not there, or (with `servedThrough`) of a user first served later, fails the condition: nothing to delete.
      await eachAtMost([...new Set(experimentIds)], FORGET_CONCURRENCY, (experiment) => applied(() => remove(t, ExperimentUser.key({ tenant, experiment, user_id: userId }), when)));
    },

    async totals(tenant, experimentId) {
      const shards = await Promise.all(
        Array.from({ length: EXPERIMENT_SHARDS }, (_, s) =>
          queryUpTo(t, { ...ExperimentTotals.indexes.primary.query({ tenant, experiment: experimentId, shard: s }), ConsistentRead: true }, Infinity),
        ),
      );
      const out = new Map<number, VariantTotals>();
      for (const row of shards.flat()) {
        const v = Number(ExperimentTotals.indexes.primary.parse(String(row.sk)).variant);
        let tot = out.get(v);
        if (!tot) out.set(v, (tot = { requests: 0, users: 0, events: {}, requestsWith: {}, usersWith: {} }));
        tot.requests += Number(row.requests ?? 0);
        tot.users += Number(row.users ?? 0);
        for (const [k, n] of Object.entries(row)) {
          if (typeof n !== 'number') continue;
          const bump = (into: Record<string, number>, prefix: string) => {
            const type = k.slice(prefix.length);
            addCount(into, type, n);
          };
          if (k.startsWith(EVENTS)) bump(tot.events, EVENTS);
          else if (k.startsWith(CONVERTED_REQUESTS)) bump(tot.requestsWith, CONVERTED_REQUESTS);
          else if (k.startsWith(CONVERTED_USERS)) bump(tot.usersWith, CONVERTED_USERS);
        }
      }
      return out;
    },
  };
}
