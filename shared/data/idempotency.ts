import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from './client.ts';
import { keys } from './keys.ts';
import { getRow, isConditionFailure } from './ops.ts';

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
export const ABANDONED_AFTER_SECONDS = 120;

export interface IdempotencyStore {
  /** Claims the key for a request whose fingerprint is `hash`, or reports what holds it. */
  claim(tenant: string, key: string, hash: string, now: number, ttlSeconds: number): Promise<IdempotencyClaim>;
  /** Records the first id the claimed request is about to write under. */
  reserve(tenant: string, key: string, firstId: number): Promise<void>;
  /** The claimed request failed after it may have written: a retry resumes it (see `claim`). */
  fail(tenant: string, key: string): Promise<void>;
  /** Stores the response; `ttlSeconds` as given to `claim` (parts of a large response expire with it). */
  complete(tenant: string, key: string, status: number, body: string, ttlSeconds: number): Promise<void>;
  release(tenant: string, key: string): Promise<void>;
}

/**
 * A stored response is gzipped, and split over chunk rows beside the key's record when it is
 * larger than this: a DynamoDB item holds at most 400 KB, and a create answers up to ~2 MB (500
 * events or 100 items, with what they were sent with).
 */
const CHUNK_BYTES = 300_000;

export function dynamoIdempotencyStore(t: TableRef): IdempotencyStore {
  /** The stored response body: inline (gzipped, or plain text in older records) or from its chunks. */
  async function bodyOf(tenant: string, key: string, rec: Record<string, unknown>): Promise<string> {
    if (typeof rec.body === 'string') return rec.body;
    const chunks = Number(rec.chunks ?? 0);
    const parts: Uint8Array[] = [];
    if (chunks === 0) parts.push(rec.body_gz as Uint8Array);
    for (let n = 0; n < chunks; n++) {
      const row = await getRow(t, keys.idempotencyChunk(tenant, key, n), { consistent: true });
      if (!row) throw new Error(`idempotency response chunk ${n} of ${chunks} is missing`);
      parts.push(row.data as Uint8Array);
    }
    return gunzipSync(Buffer.concat(parts)).toString('utf8');
  }

  return {
    async claim(tenant, key, hash, now, ttlSeconds) {
      const k = keys.idempotency(tenant, key);
      try {
        await t.doc.send(
          new PutCommand({
            TableName: t.tableName,
            Item: { ...k, hash, state: 'pending', created: now, ttl: now + ttlSeconds },
            // An expired record may linger until TTL deletes it; it no longer counts.
            ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':now': now },
          }),
        );
        return { state: 'new' };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
      const rec = await getRow(t, k, { consistent: true });
      if (!rec) return { state: 'in_progress' };
      if (rec.hash !== hash) return { state: 'mismatch' };
      const abandoned = rec.state === 'pending' && Number(rec.claimed ?? rec.created) <= now - ABANDONED_AFTER_SECONDS;
      if (rec.state === 'failed' || abandoned) {
        // Taken over by one retry only: the state (and the claim time) it was read with must still hold.
        try {
          await t.doc.send(
            new UpdateCommand({
              TableName: t.tableName,
              Key: k,
              UpdateExpression: 'SET #state = :pending, claimed = :now',
              ConditionExpression: '#state = :was AND (attribute_not_exists(claimed) OR claimed = :claimed)',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: { ':pending': 'pending', ':now': now, ':was': rec.state, ':claimed': rec.claimed ?? null },
            }),
          );
        } catch (e) {
          if (isConditionFailure(e)) return { state: 'in_progress' };
          throw e;
        }
        return { state: 'resume', firstId: rec.first_id === undefined ? undefined : Number(rec.first_id) };
      }
      if (rec.state !== 'done') return { state: 'in_progress' };
      return { state: 'replay', status: Number(rec.status), body: await bodyOf(tenant, key, rec) };
    },
    async complete(tenant, key, status, body, ttlSeconds) {
      const gz = gzipSync(body);
      const chunks = gz.byteLength > CHUNK_BYTES ? Math.ceil(gz.byteLength / CHUNK_BYTES) : 0;
      // No earlier than the record, which expires `ttlSeconds` after its claim.
      const ttl = Math.floor(Date.now() / 1000) + ttlSeconds;
      // The chunks first: the record says `done` only once its whole response is stored.
      await Promise.all(
        Array.from({ length: chunks }, (_, n) =>
          t.doc.send(new PutCommand({ TableName: t.tableName, Item: { ...keys.idempotencyChunk(tenant, key, n), data: gz.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES), ttl } })),
        ),
      );
      await t.doc.send(
        new UpdateCommand({
          TableName: t.tableName,
          Key: keys.idempotency(tenant, key),
          UpdateExpression: chunks ? 'SET #state = :done, #status = :status, chunks = :chunks' : 'SET #state = :done, #status = :status, body_gz = :gz',
          ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
          ExpressionAttributeValues: { ':done': 'done', ':status': status, ...(chunks ? { ':chunks': chunks } : { ':gz': gz }) },
        }),
      );
    },
    async reserve(tenant, key, firstId) {
      await t.doc.send(
        new UpdateCommand({ TableName: t.tableName, Key: keys.idempotency(tenant, key), UpdateExpression: 'SET first_id = :f', ExpressionAttributeValues: { ':f': firstId } }),
      );
    },
    async fail(tenant, key) {
      await t.doc.send(
        new UpdateCommand({
          TableName: t.tableName,
          Key: keys.idempotency(tenant, key),
          UpdateExpression: 'SET #state = :failed',
          ConditionExpression: '#state = :pending',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':failed': 'failed', ':pending': 'pending' },
        }),
      );
    },
    async release(tenant, key) {
      await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: keys.idempotency(tenant, key) }));
    },
  };
}
