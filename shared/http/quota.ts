import { cleanupMiddlewares } from '@aws-lambda-powertools/commons';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { config } from '../config.ts';
import { quotaLedger } from '../data/quota.ts';
import type { QuotaLedger } from '../domain/quota.ts';
import { RateLimitError } from '../errors.ts';
import { logger, metrics } from '../observability.ts';
import { errorResponse } from './base.ts';
import { baseHeaders } from './respond.ts';
import type { HttpRequest, HttpResult } from './types.ts';

/*
 * The Core API's request quota per tenant: a token bucket (TENANT_RATE_PER_SECOND, TENANT_BURST)
 * that holds across every container of every function, kept as one DynamoDB row per tenant
 * (GCRA, shared/data/quota.ts). A container does not write that row per request: it leases
 * tokens from it, a batch sized to about 100 ms of its own traffic, and takes them one per
 * request from memory, claiming the next batch while the request runs. A container without
 * tokens admits a request at once, charging it to the row while the request runs, when the
 * tenant's bucket was at least half full when it last looked ("credit", one such request in
 * flight per container at a time); otherwise the request waits for the claim. Whatever does not
 * fit is given back to the row, and a container that empties the bucket answers 429 from memory
 * (Retry-After) until a lease's worth is due again. If the row cannot be written, each container's
 * own bucket per tenant decides for a second. See docs/api.md, "Rate limits".
 */

export type Admission = { ok: true; settled: Promise<void> } | { ok: false; retryAfterSeconds: number; settled: Promise<void> };

export interface QuotaOptions {
  ratePerSecond: number;
  burst: number;
  ledger: QuotaLedger;
  /** Milliseconds since the epoch: the ledger's other users (other containers) read the same clock. */
  now?: () => number;
  /** Leased tokens not used by then are dropped (a frozen container never spends stale ones). */
  leaseTtlMs?: number;
  /** A lease holds this much of the container's own recent traffic. */
  leaseHorizonMs?: number;
  /** A ledger call given up after this long; the container then holds the tenant to the quota alone for a second. */
  ledgerTimeoutMs?: number;
}

interface TenantState {
  /** This container's own bucket for the tenant (kept always, consulted while the ledger cannot be reached). */
  localTokens: number;
  localAt: number;
  /** Tokens leased from the ledger and not used yet, valid until `leaseUntil`. */
  leased: number;
  leaseUntil: number;
  /** The tenant's `tat` (µs) as this container last learned it. */
  tat: number;
  /** No token is due before this (ms): requests are refused from memory until then. */
  blockedUntil: number;
  /** Claims in a row that got no token (other containers took them). */
  losses: number;
  /** The ledger failed: until then the local bucket alone decides (ms). */
  ledgerDownUntil: number;
  /** The claim in flight (at most one per tenant and container); never rejects. */
  pending: Promise<void> | undefined;
  /** Requests waiting for that claim. */
  waiting: number;
  /** Tokens the ledger has granted this container for the tenant, ever (waiters tell a fruitful claim by it). */
  granted: number;
  /** Admissions per second here, exponentially weighted over about a second. */
  demand: number;
  demandAt: number;
}

const DONE: Promise<void> = Promise.resolve();
const MAX_TENANTS = 10_000;

export class TenantQuotas {
  private readonly tenants = new Map<string, TenantState>();
  private readonly rate: number;
  private readonly burst: number;
  private readonly ledger: QuotaLedger;
  private readonly now: () => number;
  private readonly leaseTtlMs: number;
  private readonly leaseHorizonMs: number;
  private readonly ledgerTimeoutMs: number;
  /** Microseconds per token, and the bucket's depth in microseconds (GCRA's T and tau). */
  private readonly interval: number;
  private readonly depth: number;

  constructor(o: QuotaOptions) {
    this.rate = o.ratePerSecond;
    this.burst = o.burst;
    this.ledger = o.ledger;
    this.now = o.now ?? Date.now;
    this.leaseTtlMs = o.leaseTtlMs ?? 1000;
    this.leaseHorizonMs = o.leaseHorizonMs ?? 100;
    this.ledgerTimeoutMs = o.ledgerTimeoutMs ?? 1000;
    this.interval = 1e6 / o.ratePerSecond;
    this.depth = o.burst * this.interval;
  }

  /** Admits one request of `tenant` or refuses it; `settled` resolves once this container's ledger work for it is done. */
  admit(tenant: string): Admission | Promise<Admission> {
    const now = this.now();
    const s = this.state(tenant, now);
    return this.take(tenant, s, now) ?? this.wait(tenant, s);
  }

  /**
   * Admits from memory (a leased token; else, unless the tenant's bucket is known empty, the
   * ledger being down or credit), refuses (known empty), or undefined: the request must wait for a claim.
   */
  private take(tenant: string, s: TenantState, now: number): Admission | undefined {
    if (s.leased > 0 && now < s.leaseUntil) {
      s.leased--;
      this.admitted(s, now);
      // Claim the next lease while this one lasts (unless the tenant's bucket was empty when last
      // seen), for the requests waiting too: a claim sized to the traffic alone left a burst's
      // waiters a few tokens a round, and most of them gave up (429 far below the quota).
      if (!s.pending && s.leased <= this.leaseSize(s) / 2 && this.level(s, now) >= 1) this.claim(tenant, s, 0, Math.max(s.waiting, this.leaseSize(s)), now);
      return { ok: true, settled: s.pending ?? DONE };
    }
    s.leased = 0;
    const refused = this.refusal(s, now);
    if (refused) return refused;
    if (now < s.ledgerDownUntil) {
      this.admitted(s, now);
      return { ok: true, settled: DONE };
    }
    if (!s.pending && this.level(s, now) >= this.burst / 2) {
      this.admitted(s, now);
      this.claim(tenant, s, 1, Math.max(s.waiting, this.leaseSize(s)), now);
      return { ok: true, settled: s.pending ?? DONE };
    }
    return undefined;
  }

  private async wait(tenant: string, s: TenantState): Promise<Admission> {
    s.waiting++;
    try {
      // Each round either finds tokens or a refusal, or others waiting took what its claim
      // brought. The bounds only guard against a ledger that keeps answering nothing useful (8
      // claims in a row that brought no token) and against waiting past a lease's life.
      const until = this.now() + this.leaseTtlMs;
      for (let fruitless = 0; fruitless < 8 && this.now() < until; ) {
        if (!s.pending) this.claim(tenant, s, 0, Math.max(s.waiting, this.leaseSize(s)), this.now());
        const granted = s.granted;
        await s.pending;
        const taken = this.take(tenant, s, this.now());
        if (taken) return taken;
        if (s.granted === granted) fruitless++;
      }
      // Out of time or of fruitful claims with the tenant's bucket not known empty: the ledger is
      // too slow to tell, and as while it is down, this container's own bucket decides. A slow
      // database is not the tenant's quota used up (on the local stack under load, requests were
      // refused "quota used up" at a thousandth of the quota).
      const now = this.now();
      const refused = this.refusal(s, now);
      if (refused) return refused;
      if (s.localTokens < 1) return this.refuse((1 - s.localTokens) / this.rate);
      this.admitted(s, now);
      return { ok: true, settled: DONE };
    } finally {
      s.waiting--;
    }
  }

  /** Charges `mandatory` tokens already spent (credit) and asks for `wanted` more, while the caller goes on. */
  private claim(tenant: string, s: TenantState, mandatory: number, wanted: number, now: number): void {
    const T = this.interval;
    const nowMicros = now * 1000;
    // No more than the bucket held when last seen (at least one): what would not fit costs a refund.
    if (wanted > 1) wanted = Math.min(wanted, Math.max(1, Math.floor(this.level(s, now)) - mandatory));
    const n = mandatory + wanted;
    if (n === 0) return;
    // Where the tenant's bucket stands if no other container took from it since we last looked.
    const expected = Math.max(s.tat, nowMicros);
    const work = async () => {
      const signal = AbortSignal.timeout(this.ledgerTimeoutMs);
      try {
        const after = await this.ledger.charge(tenant, n * T, nowMicros, s.tat > nowMicros, signal);
        // Our k-th token (1-based) fits when max(tat, now) + k T - now <= depth.
        const start = after - n * T;
        const fit = Math.floor((nowMicros + this.depth - start) / T + 1e-9);
        const granted = Math.min(wanted, Math.max(0, fit - mandatory));
        const back = wanted - granted;
        s.tat = after - back * T;
        if (back > 0) await this.ledger.refund(tenant, back * T, signal);
        s.leased += granted;
        s.granted += granted;
        s.leaseUntil = this.now() + this.leaseTtlMs;
        // No token here: refuse from memory until the bucket holds a lease's worth again (about
        // 100 ms of this container's traffic, at least one token), so that a tenant at its quota
        // costs a claim per lease, not per token. A claim that got nothing because other
        // containers took the tokens since this one last looked lost a race: it backs off (a lease
        // horizon, doubling while it keeps losing, at most a second, jittered), so the containers
        // of a tenant flooding many of them do not all claim every token.
        const due = (s.tat + Math.max(1, this.leaseSize(s)) * T - this.depth) / 1000;
        s.losses = wanted > 0 && granted === 0 && start > expected + 1 ? s.losses + 1 : 0;
        const backoff = s.losses === 0 ? 0 : Math.min(1000, this.leaseHorizonMs * 2 ** (s.losses - 1)) * (0.5 + Math.random());
        // Set even while leased tokens remain: they are spent first, then requests are refused.
        s.blockedUntil = Math.max(due, now + backoff);
      } catch (e) {
        // Fail open to this container's own bucket for a second: a quota outage must not fail requests.
        s.ledgerDownUntil = this.now() + 1000;
        logger.warn('tenant quota ledger unavailable; this container alone holds the tenant to its quota for 1 s', { tenant, error: String(e) });
      } finally {
        s.pending = undefined;
      }
    };
    s.pending = work();
  }

  /** The refusal due now (the tenant's bucket is known empty; or, while the ledger is down, this container's own), or undefined. */
  private refusal(s: TenantState, now: number): Admission | undefined {
    if (now < s.blockedUntil) return this.refuse((s.blockedUntil - now) / 1000);
    this.refill(s, now);
    if (now < s.ledgerDownUntil && s.localTokens < 1) return this.refuse((1 - s.localTokens) / this.rate);
    return undefined;
  }

  private refuse(seconds: number): Admission {
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)), settled: DONE };
  }

  private admitted(s: TenantState, now: number): void {
    s.localTokens -= 1;
    s.demand = s.demand * Math.exp((s.demandAt - now) / 1000) + 1;
    s.demandAt = now;
  }

  /** Tokens to lease: about `leaseHorizonMs` of this container's own traffic, none below 1 per horizon, at most a quarter of the burst. */
  private leaseSize(s: TenantState): number {
    const perHorizon = (s.demand * this.leaseHorizonMs) / 1000;
    return perHorizon < 1 ? 0 : Math.min(Math.max(1, Math.floor(this.burst / 4)), Math.ceil(perHorizon));
  }

  /** Tokens in the tenant's bucket as this container last learned it. */
  private level(s: TenantState, now: number): number {
    return this.burst - Math.max(0, s.tat - now * 1000) / this.interval;
  }

  private refill(s: TenantState, now: number): void {
    // Never below -burst: requests admitted from leases do not run it into a debt it would repay after an outage begins.
    s.localTokens = Math.max(-this.burst, Math.min(this.burst, s.localTokens + ((now - s.localAt) / 1000) * this.rate));
    s.localAt = now;
  }

  private state(tenant: string, now: number): TenantState {
    let s = this.tenants.get(tenant);
    if (!s) {
      if (this.tenants.size >= MAX_TENANTS) this.evictIdle(now);
      s = {
        localTokens: this.burst,
        localAt: now,
        leased: 0,
        leaseUntil: 0,
        tat: 0,
        blockedUntil: 0,
        losses: 0,
        ledgerDownUntil: 0,
        pending: undefined,
        waiting: 0,
        granted: 0,
        demand: 0,
        demandAt: now,
      };
      this.tenants.set(tenant, s);
    }
    return s;
  }

  private evictIdle(now: number): void {
    for (const [k, s] of this.tenants) {
      if (!s.pending && s.waiting === 0 && now >= s.leaseUntil && now >= s.blockedUntil) this.tenants.delete(k);
    }
  }
}

/** Cache of one: the container's tenant quotas (their buckets bounded in TenantQuotas). */
let quotas: TenantQuotas | undefined;

/** The container's quotas, configured on first use. */
function containerQuotas(): TenantQuotas {
  const { ratePerSecond, burst } = config().tenantQuota;
  quotas ??= new TenantQuotas({ ratePerSecond, burst, ledger: quotaLedger() });
  return quotas;
}

/** The Core envelope's 429, with Retry-After (exposed to browsers too). */
function tooManyRequests(requestId: string, retryAfterSeconds: number): HttpResult {
  const { ratePerSecond, burst } = config().tenantQuota;
  const exposed = `${baseHeaders('core', requestId)['access-control-expose-headers'] ?? 'X-Request-Id'}, Retry-After`;
  const e = new RateLimitError(`This tenant's request quota (${ratePerSecond} requests per second, bursts of ${burst}) is used up; retry after ${retryAfterSeconds} s.`, {
    'retry-after': String(retryAfterSeconds),
    'access-control-expose-headers': exposed,
  });
  return errorResponse('core', e, requestId);
}

/**
 * Charges the request to its tenant's quota (coreAuth calls it once the tenant is known).
 * Undefined when admitted (the response then waits for `state.quotaSettled`: nothing is left
 * running when Lambda freezes the container); else the 429 to answer at once, the chain's
 * Powertools cleanup done (middy skips every later step of a response returned early).
 */
export async function admitRequest(req: HttpRequest): Promise<HttpResult | undefined> {
  const state = req.context.state;
  const a = await containerQuotas().admit(state.tenant);
  state.quotaSettled = a.settled;
  if (a.ok) return undefined;
  // A client found gone is a 401, not a 429 (coreAuth's onError answers it).
  await state.authConfirmed;
  metrics.addMetric('ClientErrors', MetricUnit.Count, 1);
  metrics.addMetric('RateLimited', MetricUnit.Count, 1);
  await cleanupMiddlewares(req);
  return tooManyRequests(state.requestId, a.retryAfterSeconds);
}
