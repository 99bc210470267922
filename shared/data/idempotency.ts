import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../errors.ts';
import type { TableRef } from './client.ts';
import { keys } from './keys.ts';
import { applied, getRow } from './ops.ts';

export type IdempotencyClaim =
  | { state: 'new' }
  /**
   * The same request ran before and failed (or its process vanished) after it may have written:
   * this one takes over, and writes under the ids that one reserved, if it got that far.
   */
  | { state: 'resume'; firstId: number | undefined }
  | { state: 'replay'; status: number; body: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' };

/** A claim still pending this long after it was taken belongs to a request that is gone (Lambda stops a request within 30 s). */
const ABANDONED_AFTER_SECONDS = 120;

/** The attempt no longer holds the key (a retry took it over): it must not write. */
export class IdempotencyClaimLost extends ConflictError {
  constructor() {
    super('idempotency_key_in_use', 'Another attempt of this request holds its Idempotency-Key now; retry shortly for its answer.');
    this.name = 'IdempotencyClaimLost';
  }
}

/**
 * Every call after `claim` names the attempt (`owner`, random per attempt) and acts only while
 * that attempt holds the key: an attempt that outlived its timeout, or whose process was thought
 * gone, can neither write under the key's ids nor store or drop its answer once a retry took over.
 */
export interface IdempotencyStore {
  /** Claims the key for a request whose fingerprint is `hash`, or reports what holds it. */
  claim(tenant: string, key: string, hash: string, owner: string, now: number, ttlSeconds: number): Promise<IdempotencyClaim>;
  /** Records the first id the attempt is about to write under; IdempotencyClaimLost if it no longer holds the key, or ids were reserved already. */
  reserve(tenant: string, key: string, owner: string, firstId: number): Promise<void>;
  /** The attempt failed after it may have written: a retry resumes it (see `claim`). */
  fail(tenant: string, key: string, owner: string): Promise<void>;
  /** Stores the response; `ttlSeconds` as given to `claim` (parts of a large response expire with it). */
  complete(tenant: string, key: string, owner: string, status: number, body: string, ttlSeconds: number): Promise<void>;
  /**
   * The attempt was refused before it wrote: the key is free again, unless ids were reserved
   * under it (an earlier attempt may have written under them): then it stays for a retry, as `fail`.
   */
  release(tenant: string, key: string, owner: string): Promise<void>;
}

/**
 * A stored response is gzipped, and split over chunk rows beside the key's record when it is
 * larger than this: a DynamoDB item holds at most 400 KB, and a create answers up to ~2 MB (500
 * events or 100 items, with what they were sent with).
 */
const CHUNK_BYTES = 300_000;

export function dynamoIdempotencyStore(t: TableRef): IdempotencyStore {
  /** An update of the key's record that holds only while `owner` holds the key (and `also` holds); false when it did not. */
  function asOwner(tenant: string, key: string, owner: string, update: string, also: string | undefined, names: Record<string, string>, values: Record<string, unknown>): Promise<boolean> {
    return applied(() =>
      t.doc.send(
        new UpdateCommand({
          TableName: t.tableName,
          Key: keys.idempotency(tenant, key),
          UpdateExpression: update,
          ConditionExpression: also ? `#owner = :owner AND ${also}` : '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner', ...names },
          ExpressionAttributeValues: { ':owner': owner, ...values },
        }),
      ),
    );
  }

  /** The stored response body: inline (gzipped, or plain text in older records) or from its chunks. */
  async function bodyOf(tenant: string, key: string, rec: Record<string, unknown>): Promise<string> {
    if (typeof rec.body === 'string') return rec.body;
    const chunks = Number(rec.chunks ?? 0);
    const parts: Uint8Array[] = [];
    if (chunks === 0) parts.push(rec.body_gz as Uint8Array);
    for (let n = 0; n < chunks; n++) {
      const row = await getRow(t, keys.idempotencyChunk(tenant, key, String(rec.owner), n), { consistent: true });
      if (!row) throw new Error(`idempotency response chunk ${n} of ${chunks} is missing`);
      parts.push(row.data as Uint8Array);
    }
    return gunzipSync(Buffer.concat(parts)).toString('utf8');
  }

  const store: IdempotencyStore = {
    async claim(tenant, key, hash, owner, now, ttlSeconds) {
      const k = keys.idempotency(tenant, key);
      const claimed = await applied(() =>
        t.doc.send(
          new PutCommand({
            TableName: t.tableName,
            Item: { ...k, hash, state: 'pending', owner, created: now, ttl: now + ttlSeconds },
            // An expired record may linger until TTL deletes it; it no longer counts.
            ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':now': now },
          }),
        ),
      );
      if (claimed) return { state: 'new' };
      const rec = await getRow(t, k, { consistent: true });
      if (!rec) return { state: 'in_progress' };
      if (rec.hash !== hash) return { state: 'mismatch' };
      const abandoned = rec.state === 'pending' && Number(rec.claimed ?? rec.created) <= now - ABANDONED_AFTER_SECONDS;
      if (rec.state === 'failed' || abandoned) {
        // Taken over by one retry only: the state (and the claim time) it was read with must still hold.
        const takenOver = await applied(() =>
          t.doc.send(
            new UpdateCommand({
              TableName: t.tableName,
              Key: k,
              // A fresh lease (`ttl` too: a takeover near the end of the first claim's life
              // would otherwise outlive its record).
              UpdateExpression: 'SET #state = :pending, claimed = :now, #owner = :owner, #ttl = :ttl',
              // ...and the ids reserved as read: an old attempt reserving meanwhile would leave this one
              // with no ids to reuse and its own to write twice.
              ConditionExpression: `#state = :was AND (attribute_not_exists(claimed) OR claimed = :claimed) AND ${rec.first_id === undefined ? 'attribute_not_exists(first_id)' : 'first_id = :fid'}`,
              ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner', '#ttl': 'ttl' },
              ExpressionAttributeValues: {
                ':pending': 'pending', ':now': now, ':was': rec.state, ':claimed': rec.claimed ?? null, ':owner': owner, ':ttl': now + ttlSeconds,
                ...(rec.first_id === undefined ? {} : { ':fid': rec.first_id }),
              },
            }),
          ),
        );
        if (!takenOver) return { state: 'in_progress' };
        return { state: 'resume', firstId: rec.first_id === undefined ? undefined : Number(rec.first_id) };
      }
      if (rec.state !== 'done') return { state: 'in_progress' };
      return { state: 'replay', status: Number(rec.status), body: await bodyOf(tenant, key, rec) };
    },
    async complete(tenant, key, owner, status, body, ttlSeconds) {
      const gz = gzipSync(body);
      const chunks = gz.byteLength > CHUNK_BYTES ? Math.ceil(gz.byteLength / CHUNK_BYTES) : 0;
      // No earlier than the record, which expires `ttlSeconds` after its claim.
      const ttl = Math.floor(Date.now() / 1000) + ttlSeconds;
      // The chunks first: the record says `done` only once its whole response is stored.
      await Promise.all(
        Array.from({ length: chunks }, (_, n) =>
          // Under this attempt's name: an attempt that lost the key cannot overwrite the answer's parts.
          t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.idempotencyChunk(tenant, key, owner, n), data: gz.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES), ttl } })),
        ),
      );
      const stored = await asOwner(
        tenant, key, owner,
        chunks ? 'SET #state = :done, #status = :status, chunks = :chunks' : 'SET #state = :done, #status = :status, body_gz = :gz',
        undefined,
        { '#state': 'state', '#status': 'status' },
        { ':done': 'done', ':status': status, ...(chunks ? { ':chunks': chunks } : { ':gz': gz }) },
      );
      if (!stored) throw new IdempotencyClaimLost();
    },
    async reserve(tenant, key, owner, firstId) {
      const reserved = await asOwner(tenant, key, owner, 'SET first_id = :f', '#state = :pending AND attribute_not_exists(first_id)', { '#state': 'state' }, { ':f': firstId, ':pending': 'pending' });
      if (!reserved) throw new IdempotencyClaimLost();
    },
    async fail(tenant, key, owner) {
      // Not held any more (another attempt took it, or it is done): nothing of this one's to record.
      await asOwner(tenant, key, owner, 'SET #state = :failed', '#state = :pending', { '#state': 'state' }, { ':failed': 'failed', ':pending': 'pending' });
    },
    async release(tenant, key, owner) {
      const freed = await applied(() =>
        t.doc.send(
          new DeleteCommand({
            TableName: t.tableName,
            Key: keys.idempotency(tenant, key),
            ConditionExpression: '#owner = :owner AND attribute_not_exists(first_id)',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
          }),
        ),
      );
      // Ids were reserved under the key (or another attempt holds it): keep it for a retry.
      if (!freed) await store.fail(tenant, key, owner);
    },
  };
  return store;
}
