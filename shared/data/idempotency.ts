import { gunzipSync, gzipSync } from 'node:zlib';
import { nowSeconds } from '../clock.ts';
import { IdempotencyClaimLost, type IdempotencyStore } from '../domain/idempotency.ts';
import type { TableRef } from './client.ts';
import { Idempotency, IdempotencyChunk } from './entities.ts';
import type { Change, Condition } from './expressions.ts';
import { applied, getRow, isNew, isStored, put, queryPage, refine, remove, update, type Row } from './ops.ts';

/*
 * Idempotency records (the IdempotencyStore of shared/domain/idempotency.ts): one row per key,
 * claimed by one attempt (`owner`) at a time, with the stored answer inline or in chunk rows.
 */

/** A claim still pending this long after it was taken belongs to a request that is gone (Lambda stops a request within 30 s). */
const ABANDONED_AFTER_SECONDS = 120;

/** How far another container's clock may be behind the one that claimed a key (`forget`). */
const CLOCK_SLACK_SECONDS = 60;

/**
 * A stored response is gzipped, and split over chunk rows beside the key's record when it is
 * larger than this: a DynamoDB item holds at most 400 KB, and a create answers up to ~2 MB (500
 * events or 100 items, with what they were sent with).
 */
const CHUNK_BYTES = 300_000;

export function dynamoIdempotencyStore(t: TableRef): IdempotencyStore {
  /** An update of the key's record that holds only while `owner` holds the key (and `also` holds); false when it did not. */
  function asOwner(tenant: string, key: string, owner: string, change: Change, also?: Condition): Promise<boolean> {
    return applied(() => update(t, Idempotency.key({ tenant, key }), change, { when: (x) => x.and(x.eq('owner', owner), ...(also ? [also(x)] : [])) }));
  }

  /** The stored response body: inline (gzipped, or plain text in older records) or from its chunks. */
  async function bodyOf(tenant: string, key: string, rec: Record<string, unknown>): Promise<string> {
    if (typeof rec.body === 'string') return rec.body;
    const chunks = Number(rec.chunks ?? 0);
    const parts: Uint8Array[] = [];
    if (chunks === 0) parts.push(rec.body_gz as Uint8Array);
    for (let n = 0; n < chunks; n++) {
      const row = await getRow(t, IdempotencyChunk.key({ tenant, key, owner: String(rec.owner), n }), { consistent: true });
      if (!row) throw new Error(`idempotency response chunk ${n} of ${chunks} is missing`);
      parts.push(row.data as Uint8Array);
    }
    return gunzipSync(Buffer.concat(parts)).toString('utf8');
  }

  const chunks = IdempotencyChunk.indexes.primary;
  /** Deletes the key's chunk rows: every attempt's, or only `owner`'s. */
  async function dropChunks(tenant: string, key: string, owner?: string): Promise<void> {
    let start: Row | undefined;
    do {
      const page = await queryPage(t, {
        ...refine(chunks.query({ tenant, key }, { beginsWith: chunks.skPrefix(owner === undefined ? {} : { owner }) }), { project: [chunks.pkAttr, chunks.skAttr] }),
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      await Promise.all(page.items.map((row) => remove(t, { [chunks.pkAttr]: row[chunks.pkAttr], [chunks.skAttr]: row[chunks.skAttr] })));
      start = page.lastKey;
    } while (start);
  }

  const store: IdempotencyStore = {
    async claim(tenant, key, hash, owner, now, ttlSeconds) {
      const k = Idempotency.key({ tenant, key });
      // An expired record may linger until TTL deletes it; it no longer counts.
      const claimed = await applied(() => put(t, { ...k, hash, state: 'pending', owner, created: now, ttl: now + ttlSeconds }, (x) => x.or(isNew(x), x.cmp('ttl', '<', now))));
      if (claimed) return { state: 'new' };
      const rec = await getRow(t, k, { consistent: true });
      if (!rec) return { state: 'in_progress' };
      // This attempt's own claim: the put landed, its answer was lost, and the SDK sent it again
      // (which found the row). Without this the key stayed held by nobody for 120 s.
      if (rec.owner === owner && rec.state === 'pending') return { state: 'new' };
      // Its request wrote events of a user erased since: it keeps no fingerprint to compare with.
      if (rec.state === 'erased') return { state: 'erased' };
      if (rec.hash !== hash) return { state: 'mismatch' };
      const abandoned = rec.state === 'pending' && Number(rec.claimed ?? rec.created) <= now - ABANDONED_AFTER_SECONDS;
      if (rec.state === 'failed' || abandoned) {
        // Taken over by one retry only: the state (and the claim time) it was read with must
        // still hold, and the ids reserved as read: an old attempt reserving meanwhile would
        // leave this one with no ids to reuse and its own to write twice. A fresh lease (`ttl`
        // too: a takeover near the end of the first claim's life would otherwise outlive its record).
        const takenOver = await applied(() =>
          update(
            t,
            k,
            { set: { state: 'pending', claimed: now, owner, ttl: now + ttlSeconds } },
            {
              when: (x) =>
                x.and(x.eq('state', rec.state), x.or(x.absent('claimed'), x.eq('claimed', rec.claimed ?? null)), rec.first_id === undefined ? x.absent('first_id') : x.eq('first_id', rec.first_id)),
            },
          ),
        );
        // Not applied: another retry took it over first, or this one's update landed and the
        // SDK sent it again (its answer lost): then the record names this attempt.
        if (!takenOver && (await getRow(t, k, { consistent: true }))?.owner !== owner) return { state: 'in_progress' };
        return { state: 'resume', firstId: rec.first_id === undefined ? undefined : Number(rec.first_id) };
      }
      if (rec.state !== 'done') return { state: 'in_progress' };
      try {
        return { state: 'replay', status: Number(rec.status), body: await bodyOf(tenant, key, rec) };
      } catch (e) {
        // An erasure forgot the key between the record's read and its parts' (it deleted them).
        if ((await getRow(t, k, { consistent: true }))?.state === 'erased') return { state: 'erased' };
        throw e;
      }
    },
    async complete(tenant, key, owner, status, body, ttlSeconds) {
      const gz = gzipSync(body);
      const chunks = gz.byteLength > CHUNK_BYTES ? Math.ceil(gz.byteLength / CHUNK_BYTES) : 0;
      // No earlier than the record, which expires `ttlSeconds` after its claim.
      const ttl = nowSeconds() + ttlSeconds;
      // The chunks first: the record says `done` only once its whole response is stored.
      await Promise.all(
        Array.from({ length: chunks }, (_, n) =>
          // Under this attempt's name: an attempt that lost the key cannot overwrite the answer's parts.
          put(t, { ...IdempotencyChunk.key({ tenant, key, owner, n }), data: gz.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES), ttl }),
        ),
      );
      const stored = await asOwner(tenant, key, owner, { set: { state: 'done', status, ...(chunks ? { chunks } : { body_gz: gz }) } });
      if (!stored) {
        // Another attempt holds the key, or an erasure forgot it: the parts of this answer are nobody's.
        if (chunks) await dropChunks(tenant, key, owner);
        throw new IdempotencyClaimLost();
      }
    },
    async reserve(tenant, key, owner, firstId) {
      // The same first id again is this reservation sent again (the SDK's retry of one that landed).
      const reserved = await asOwner(tenant, key, owner, { set: { first_id: firstId } }, (x) => x.and(x.eq('state', 'pending'), x.or(x.absent('first_id'), x.eq('first_id', firstId))));
      if (!reserved) throw new IdempotencyClaimLost();
    },
    async fail(tenant, key, owner) {
      // Not held any more (another attempt took it, or it is done): nothing of this one's to record.
      await asOwner(tenant, key, owner, { set: { state: 'failed' } }, (x) => x.eq('state', 'pending'));
    },
    async release(tenant, key, owner) {
      const freed = await applied(() => remove(t, Idempotency.key({ tenant, key }), (x) => x.and(x.eq('owner', owner), x.absent('first_id'))));
      // Ids were reserved under the key (or another attempt holds it): keep it for a retry.
      if (!freed) await store.fail(tenant, key, owner);
    },
    async forget(tenant, key, writtenAt) {
      // Whatever its state: no attempt holds it any more (no owner), none can store its answer.
      // Only the record of the request that wrote the events (claimed before them; a record
      // claimed once that one expired is a day younger: the minute allows for a resuming
      // container's clock).
      const ours: Condition = (x) => x.and(isStored(x), x.cmp('created', '<=', writtenAt + CLOCK_SLACK_SECONDS));
      // A request that had not finished (it stopped, or runs still, after reserving its ids) may
      // not have written its other users' events: the record keeps its ids and fingerprint, and
      // the retry resumes, leaving out the events an ended erasure covers, and answers 409
      // `idempotency_key_erased` (shared/domain/events.ts). Until 2026-12-04 it answered that 409
      // from the record alone, and those other events were never written.
      const unfinished = await applied(() =>
        update(
          t,
          Idempotency.key({ tenant, key }),
          { set: { state: 'failed' }, remove: ['owner', 'status', 'body', 'body_gz', 'chunks'] },
          { when: (x) => x.and(ours(x), x.exists('first_id'), x.or(x.eq('state', 'pending'), x.eq('state', 'failed'))) },
        ),
      );
      if (unfinished) return;
      const forgotten = await applied(() =>
        update(t, Idempotency.key({ tenant, key }), { set: { state: 'erased' }, remove: ['hash', 'owner', 'claimed', 'first_id', 'status', 'body', 'body_gz', 'chunks'] }, { when: ours }),
      );
      // Only the parts of the record forgotten: a record left alone (claimed since, by the key's
      // later request) keeps its answer's parts, or its replays would find them missing. A repeated
      // erasure forgets the record again (it still matches), and drops what a cut-off one left.
      if (forgotten) await dropChunks(tenant, key);
    },
  };
  return store;
}
