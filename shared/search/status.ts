/** The index's status (`GET /api/search-index`) and a rebuild on request (`POST /api/search-index/rebuild`). */
import { nowMs, nowSeconds } from '../clock.ts';
import type { ChangeKey } from '../domain/types.ts';
import { FreshRead } from '../fresh-read.ts';
import { Lru } from '../lru.ts';
import type { WorkQueue } from '../queue/messages.ts';
import type { SearchDoc } from './types.ts';
import { currentIndex, rereadFrom, type SearchDeps } from './views.ts';

/** When a document last changed, as its change row tells it (`ChangeKey.at`): its content or its embedding. */
const changedAt = (d: SearchDoc): number => Math.max(d.updated_at, d.embedding_updated_at ?? 0);

/**
 * The changes since one index build, as this container last listed them (latest state per id).
 * Listed in full once per build and container, then from a little before the previous listing
 * began (the clock-skew margin, as the search delta reads): a status call during a bulk import
 * lists only what changed since the call before it. Bound: one entry per item changed since
 * the build, without item data (dropped with the build it counts from).
 */
interface ChangeTally {
  builtAt: number;
  /** When the latest listing began (ms; 0: never). */
  readAt: number;
  changes: Map<number, ChangeKey>;
  refresh: FreshRead<void>;
}

/**
 * Cache: each tenant's tally. Bound: STATUS_TENANTS tenants, the least recently asked for let go
 * (its next status call lists the changes since its build again, as a new container does). Until
 * 2026-12-08 unbounded: a container kept every tenant's tally it had answered for its whole life,
 * beside the search views' memory budget.
 */
export const STATUS_TENANTS = 1001;
const tallies = new Lru<string, ChangeTally>(STATUS_TENANTS);

function tallyFor(deps: SearchDeps, tenant: string, builtAt: number): ChangeTally {
  const known = tallies.get(tenant);
  if (known && known.builtAt === builtAt) return known;
  const tally: ChangeTally = {
    builtAt,
    readAt: 0,
    changes: new Map(),
    refresh: new FreshRead(async () => {
      const list = async () => {
        const startedAt = nowMs();
        // Oldest first: a later state of an item replaces an earlier one.
        for (const c of await deps.items.changeKeysSince(tenant, rereadFrom(builtAt, tally.readAt))) tally.changes.set(c.id, c);
        tally.readAt = startedAt;
      };
      const first = tally.readAt === 0;
      await list();
      // A listing can miss a row that moves meanwhile (found at neither key: see the search
      // delta's first read); later listings find it, but a first one answers a call at once.
      if (first) await list();
    }),
  };
  tallies.set(tenant, tally);
  return tally;
}

/**
 * `GET /api/search-index`: items searchable now, how many are embedded or waiting, and the latest
 * change search reflects. Counted from the index and a listing of the changes since its build
 * that holds no item data (`changeKeysSince`: their ids, states and times, kept up to date by
 * `ChangeTally`), never from the delta's items: during a bulk import those changes can be the
 * whole catalog.
 */
export async function indexStatus(deps: SearchDeps, tenant: string) {
  const index = await currentIndex(deps, tenant);
  const tally = tallyFor(deps, tenant, index.builtAt);
  const [, pending] = await Promise.all([tally.refresh.get(), deps.items.pendingCount(tenant)]);
  let items = index.docs.length;
  let latest = index.builtAt;
  let since = 0;
  for (const c of tally.changes.values()) {
    const row = index.byId.get(c.id);
    if (row !== undefined) items -= 1;
    if (!c.deleted) items += 1;
    latest = Math.max(latest, c.at);
    // Listed from a little before the build (the clock-skew margin): a change the build holds (its
    // version, or a deletion before the build's second of an item it does not hold) is none since
    // it (until 2026-12-05 such changes were counted until the next build).
    const held = row === undefined ? c.deleted && c.at < index.builtAt : !c.deleted && changedAt(index.docs[row] as SearchDoc) >= c.at;
    if (!held) since += 1;
  }
  return {
    items,
    embedded: Math.max(0, items - pending),
    pending,
    updated_at: latest || null,
    index_built_at: index.builtAt || null,
    changes_since_build: since,
  };
}

/** Asks the embedding worker for a new index build now (the sweep does it on its own schedule). */
export async function requestIndexBuild(queue: WorkQueue, tenant: string) {
  const requested_at = nowSeconds();
  await queue.send('embedding', [{ type: 'build-index', tenant, requested_at }]);
  return { status: 'Queued', requested_at };
}
