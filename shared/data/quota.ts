import type { QuotaLedger } from '../domain/quota.ts';
import { table, type TableRef } from './client.ts';
import { Quota } from './entities.ts';
import { isConditionFailure, update } from './ops.ts';

/*
 * A tenant's request quota as one row (the QuotaLedger of shared/domain/quota.ts): `tat`, the
 * theoretical arrival time of its token bucket, in microseconds, with a TTL.
 */

/** Rows of idle tenants expire a day after their last charge (the table's TTL). */
const ROW_TTL_SECONDS = 86_400;

export function dynamoQuotaLedger(t: TableRef): QuotaLedger {
  const ttl = (nowMicros: number) => Math.floor(nowMicros / 1e6) + ROW_TTL_SECONDS;
  return {
    async charge(tenant, incMicros, nowMicros, ahead, signal) {
      const key = Quota.key({ tenant });
      const inc = Math.round(incMicros);
      const now = Math.floor(nowMicros);
      // tat >= now: add to it; tat < now or no row: start from now. Each is one conditional
      // write; the two conditions cover every state, so the other one holds unless tat crossed
      // now in between (then the first holds again).
      for (let attempt = 0, tryAhead = ahead; attempt < 4; attempt++, tryAhead = !tryAhead) {
        try {
          if (tryAhead) {
            const out = await update(t, key, { set: { ttl: ttl(now) }, add: { tat: inc } }, { when: (x) => x.cmp('tat', '>=', now), returnValues: 'UPDATED_NEW', ...(signal ? { signal } : {}) });
            return Number(out?.tat);
          }
          await update(t, key, { set: { tat: now + inc, ttl: ttl(now) } }, { when: (x) => x.or(x.absent('tat'), x.cmp('tat', '<', now)), ...(signal ? { signal } : {}) });
          return now + inc;
        } catch (e) {
          if (!isConditionFailure(e)) throw e;
        }
      }
      throw new Error(`The quota row of tenant ${tenant} kept crossing the present; charge abandoned.`);
    },
    async refund(tenant, micros, signal) {
      try {
        // A row expired meanwhile has nothing to give back to (and ADD would create one without a TTL).
        await update(t, Quota.key({ tenant }), { add: { tat: -Math.round(micros) } }, { when: (x) => x.exists('tat'), ...(signal ? { signal } : {}) });
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    },
  };
}

/** Cache of one: the container's ledger. */
let ledger: QuotaLedger | undefined;

/** The container's quota ledger on its table, built on first use. */
export function quotaLedger(): QuotaLedger {
  ledger ??= dynamoQuotaLedger(table());
  return ledger;
}
