import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from './client.ts';
import { keys } from './keys.ts';
import { getRow, isConditionFailure } from './ops.ts';

export type IdempotencyClaim =
  | { state: 'new' }
  | { state: 'replay'; status: number; body: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' };

export interface IdempotencyStore {
  /** Claims the key for a request whose fingerprint is `hash`, or reports what holds it. */
  claim(tenant: string, key: string, hash: string, now: number, ttlSeconds: number): Promise<IdempotencyClaim>;
  complete(tenant: string, key: string, status: number, body: string): Promise<void>;
  release(tenant: string, key: string): Promise<void>;
}

export function dynamoIdempotencyStore(t: TableRef): IdempotencyStore {
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
      if (rec.state !== 'done') return { state: 'in_progress' };
      return { state: 'replay', status: Number(rec.status), body: String(rec.body) };
    },
    async complete(tenant, key, status, body) {
      await t.doc.send(
        new UpdateCommand({
          TableName: t.tableName,
          Key: keys.idempotency(tenant, key),
          UpdateExpression: 'SET #state = :done, #status = :status, #body = :body',
          ExpressionAttributeNames: { '#state': 'state', '#status': 'status', '#body': 'body' },
          ExpressionAttributeValues: { ':done': 'done', ':status': status, ':body': body },
        }),
      );
    },
    async release(tenant, key) {
      await t.doc.send(new DeleteCommand({ TableName: t.tableName, Key: keys.idempotency(tenant, key) }));
    },
  };
}
