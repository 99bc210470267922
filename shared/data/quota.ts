import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { table, type TableRef } from './client.ts';
import { keys } from './keys.ts';
import { isConditionFailure } from './ops.ts';

/**
 * A tenant's request quota as one row: `tat`, the tenant's token bucket as a "theoretical
 * arrival time" (GCRA, in microseconds since the epoch): the bucket is full when `tat` is not
 * after now, and holds `burst - (tat - now) / interval` tokens otherwise. Taking n tokens moves
 * it to `max(tat, now) + n * interval`. Every container of every function charges the same row,
 * so the tenant's bucket holds across all of them (see shared/http/quota.ts for how a container
 * uses it without a round trip per request).
 */
export interface QuotaLedger {
  /**
   * Moves the tenant's `tat` by `incMicros` from `max(tat, nowMicros)` and answers the new
   * `tat`. `ahead` is the caller's guess whether `tat` is after now (it picks which of the two
   * conditional writes to try first; a wrong guess costs one more). Never refuses: whether the
   * tokens fit is the caller's to judge from the answer, giving back what did not with `refund`.
   */
  charge(tenant: string, incMicros: number, nowMicros: number, ahead: boolean, signal?: AbortSignal): Promise<number>;
  /** Takes `micros` back off the tenant's `tat` (tokens charged but not used): an ADD, so concurrent charges and refunds commute. */
  refund(tenant: string, micros: number, signal?: AbortSignal): Promise<void>;
}

/** Rows of idle tenants expire a day after their last charge (the table's TTL). */
const ROW_TTL_SECONDS = 86_400;

export function dynamoQuotaLedger(t: TableRef): QuotaLedger {
  const ttl = (nowMicros: number) => Math.floor(nowMicros / 1e6) + ROW_TTL_SECONDS;
  return {
    async charge(tenant, incMicros, nowMicros, ahead, signal) {
      const Key = keys.quota(tenant);
      const inc = Math.round(incMicros);
      const now = Math.floor(nowMicros);
      // tat >= now: add to it; tat < now or no row: start from now. Each is one conditional
      // write; the two conditions cover every state, so the other one holds unless tat crossed
      // now in between (then the first holds again).
      for (let attempt = 0, tryAhead = ahead; attempt < 4; attempt++, tryAhead = !tryAhead) {
        try {
          if (tryAhead) {
            const out = await t.doc.send(
              new UpdateCommand({
                TableName: t.tableName,
                Key,
                UpdateExpression: 'SET #ttl = :ttl ADD tat :inc',
                ConditionExpression: 'tat >= :now',
                ExpressionAttributeNames: { '#ttl': 'ttl' },
                ExpressionAttributeValues: { ':inc': inc, ':now': now, ':ttl': ttl(now) },
                ReturnValues: 'UPDATED_NEW',
              }),
              signal ? { abortSignal: signal } : {},
            );
            return Number(out.Attributes?.tat);
          }
          await t.doc.send(
            new UpdateCommand({
              TableName: t.tableName,
              Key,
              UpdateExpression: 'SET tat = :tat, #ttl = :ttl',
              ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
              ExpressionAttributeNames: { '#ttl': 'ttl' },
              ExpressionAttributeValues: { ':tat': now + inc, ':now': now, ':ttl': ttl(now) },
            }),
            signal ? { abortSignal: signal } : {},
          );
          return now + inc;
        } catch (e) {
          if (!isConditionFailure(e)) throw e;
        }
      }
      throw new Error(`The quota row of tenant ${tenant} kept crossing the present; charge abandoned.`);
    },
    async refund(tenant, micros, signal) {
      try {
        await t.doc.send(
          new UpdateCommand({
            TableName: t.tableName,
            Key: keys.quota(tenant),
            UpdateExpression: 'ADD tat :dec',
            // A row expired meanwhile has nothing to give back to (and ADD would create one without a TTL).
            ConditionExpression: 'attribute_exists(tat)',
            ExpressionAttributeValues: { ':dec': -Math.round(micros) },
          }),
          signal ? { abortSignal: signal } : {},
        );
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    },
  };
}

let ledger: QuotaLedger | undefined;

/** The container's quota ledger on its table, built on first use. */
export function quotaLedger(): QuotaLedger {
  ledger ??= dynamoQuotaLedger(table());
  return ledger;
}
