import { describe, expect, it } from 'vitest';
import type { QuotaLedger } from '../../shared/domain/quota.ts';
import { TenantQuotas, type Admission } from '../../shared/http/quota.ts';

/** The ledger's semantics in memory (shared/data/quota.ts does the same on DynamoDB), counting calls. */
class MemoryLedger implements QuotaLedger {
  readonly tat = new Map<string, number>();
  calls = 0;
  failing = false;
  async charge(tenant: string, inc: number, now: number): Promise<number> {
    this.calls++;
    await Promise.resolve();
    if (this.failing) throw new Error('ledger down');
    const next = Math.max(this.tat.get(tenant) ?? 0, now) + Math.round(inc);
    this.tat.set(tenant, next);
    return next;
  }
  async refund(tenant: string, micros: number): Promise<void> {
    this.calls++;
    await Promise.resolve();
    if (this.failing) throw new Error('ledger down');
    const t = this.tat.get(tenant);
    if (t !== undefined) this.tat.set(tenant, t - Math.round(micros));
  }
}

/** The same ledger `ms` away: each charge answers after that long (a round trip, or a database slow under load). */
function slowLedger(ms: number): MemoryLedger {
  return new (class extends MemoryLedger {
    override async charge(tenant: string, inc: number, now: number): Promise<number> {
      await new Promise((r) => setTimeout(r, ms));
      return super.charge(tenant, inc, now);
    }
  })();
}

function clock(start = 1_750_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const isPromise = (a: Admission | Promise<Admission>): a is Promise<Admission> => a instanceof Promise;

/** Runs `perStep` requests of `tenant` on each container every `stepMs` for `ms`; counts what each got. */
async function drive(containers: TenantQuotas[], c: ReturnType<typeof clock>, tenant: string, ms: number, stepMs: number, perStep: number) {
  let ok = 0;
  let refused = 0;
  const retryAfter = new Set<number>();
  for (let t = 0; t < ms; t += stepMs) {
    const all = await Promise.all(containers.flatMap((q) => Array.from({ length: perStep }, () => q.admit(tenant))));
    for (const a of all) {
      await a.settled;
      if (a.ok) ok++;
      else {
        refused++;
        retryAfter.add(a.retryAfterSeconds);
      }
    }
    c.advance(stepMs);
  }
  return { ok, refused, retryAfter };
}

describe('tenant quota', () => {
  it('admits the burst, then the rate, and refuses the rest with a Retry-After of whole seconds', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    const q = new TenantQuotas({ ratePerSecond: 50, burst: 20, ledger, now: c.now });
    // 2 s of 10 requests every 10 ms (1,000/s): the burst plus 2 s of the rate, less at most a
    // lease (a quarter of the burst) still accruing when the run ends.
    const r = await drive([q], c, 'a', 2000, 10, 10);
    expect(r.ok).toBeGreaterThanOrEqual(20 + 100 - 5);
    expect(r.ok).toBeLessThanOrEqual(20 + 100 + 1);
    expect(r.refused).toBe(2000 - r.ok);
    expect([...r.retryAfter]).toEqual([1]);
  });

  it('says in its Retry-After, rounded up, when the next token is due: a request sent then is admitted', async () => {
    // One token every 2.5 s: a refusal just after the burst is spent says 3 s, not 2.
    const c = clock();
    const q = new TenantQuotas({ ratePerSecond: 0.4, burst: 1, ledger: new MemoryLedger(), now: c.now });
    const first = await q.admit('a');
    await first.settled;
    expect(first.ok).toBe(true);
    const refused = await q.admit('a');
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: 3 });
    c.advance(3000);
    const again = await q.admit('a');
    await again.settled;
    expect(again.ok).toBe(true);
  });

  it('holds across containers sharing the ledger (four of them, each flooded)', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    const qs = Array.from({ length: 4 }, () => new TenantQuotas({ ratePerSecond: 100, burst: 50, ledger, now: c.now }));
    const r = await drive(qs, c, 'a', 3000, 5, 4);
    // Without the ledger each container would admit 50 + 300: 1,400 in all.
    const limit = 50 + 100 * 3;
    // Credit lets at most one request per container through ahead of its charge.
    expect(r.ok).toBeLessThanOrEqual(limit + qs.length);
    expect(r.ok).toBeGreaterThanOrEqual(limit * 0.9);
  });

  it('keeps tenants apart: one flooding leaves another its whole quota, never refused', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    const qs = Array.from({ length: 2 }, () => new TenantQuotas({ ratePerSecond: 20, burst: 20, ledger, now: c.now }));
    let bOk = 0;
    let bRefused = 0;
    let aRefused = 0;
    for (let t = 0; t < 3000; t += 10) {
      const floods = qs.flatMap((q) => Array.from({ length: 8 }, () => q.admit('a')));
      const b = t % 100 === 0 ? [qs[(t / 100) % 2]!.admit('b')] : [];
      for (const a of await Promise.all(floods)) if (!a.ok) aRefused++;
      for (const a of await Promise.all(b)) a.ok ? bOk++ : bRefused++;
      c.advance(10);
    }
    expect(bRefused).toBe(0);
    expect(bOk).toBe(30);
    expect(aRefused).toBeGreaterThan(4000);
  });

  it('costs no wait for a tenant well within its quota, and one ledger write per request at most', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    const q = new TenantQuotas({ ratePerSecond: 100, burst: 200, ledger, now: c.now });
    let waited = 0;
    for (let i = 0; i < 50; i++) {
      const a = q.admit('a');
      if (isPromise(a)) waited++;
      const r = await a;
      expect(r.ok).toBe(true);
      await r.settled;
      c.advance(200);
    }
    expect(waited).toBe(0);
    expect(ledger.calls).toBe(50);
  });

  it('leases tokens to a busy container: well under one ledger call per request', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    const q = new TenantQuotas({ ratePerSecond: 10_000, burst: 20_000, ledger, now: c.now });
    // 2 requests per ms (2,000/s), one at a time as on Lambda, for 2 s.
    const r = await drive([q], c, 'a', 2000, 1, 2);
    expect(r.refused).toBe(0);
    expect(ledger.calls / r.ok).toBeLessThan(0.1);
  });

  it('falls back to each container holding the tenant to the quota alone while the ledger fails', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    ledger.failing = true;
    const q = new TenantQuotas({ ratePerSecond: 50, burst: 20, ledger, now: c.now });
    const r = await drive([q], c, 'a', 2000, 10, 10);
    expect(r.ok).toBeGreaterThanOrEqual(20 + 100 - 2);
    expect(r.ok).toBeLessThanOrEqual(20 + 100 + 1);
  });

  it('refuses from memory while the bucket is known empty (no ledger call per refused request)', async () => {
    const c = clock();
    const ledger = new MemoryLedger();
    const q = new TenantQuotas({ ratePerSecond: 1, burst: 2, ledger, now: c.now });
    await drive([q], c, 'a', 10, 1, 5);
    const before = ledger.calls;
    const r = await drive([q], c, 'a', 500, 1, 5);
    expect(r.ok).toBe(0);
    expect(r.refused).toBe(2500);
    expect(ledger.calls - before).toBeLessThanOrEqual(1);
  });

  it('admits a burst far under the quota however its requests arrive while claims are in flight', async () => {
    // A ledger a round trip away (2 ms), and 700 requests arriving 20 a millisecond: most of them
    // find a claim in flight, sized for the traffic before them, and wait for tokens.
    const ledger = slowLedger(2);
    const q = new TenantQuotas({ ratePerSecond: 20_000, burst: 40_000, ledger });
    for (const n of [100, 700]) {
      const before = ledger.calls;
      const all = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          await new Promise((r) => setTimeout(r, Math.floor(i / 20)));
          const a = await q.admit('t');
          await a.settled;
          return a.ok;
        }),
      );
      expect(all.filter((ok) => !ok)).toHaveLength(0);
      expect(ledger.calls - before).toBeLessThan(n / 5);
    }
  });

  it('does not answer "quota used up" because the ledger is slow: a wait that runs out of time falls back to the container\'s own bucket', async () => {
    // Every claim takes longer than a waiter waits (a database slow under load), and requests
    // keep arriving while claims are in flight: the late ones found no token in time and were
    // refused, far under the quota.
    const q = new TenantQuotas({ ratePerSecond: 20_000, burst: 40_000, ledger: slowLedger(60), leaseTtlMs: 40 });
    const all = await Promise.all(
      Array.from({ length: 400 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, Math.floor(i / 4)));
        const a = await q.admit('t');
        await a.settled;
        return a.ok;
      }),
    );
    expect(all.filter((ok) => !ok)).toHaveLength(0);
  });

  it('still refuses a tenant whose bucket is empty when the ledger is slow', async () => {
    const q = new TenantQuotas({ ratePerSecond: 10, burst: 20, ledger: slowLedger(60), leaseTtlMs: 40 });
    const started = Date.now();
    const all = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const a = await q.admit('t');
        await a.settled;
        return a.ok;
      }),
    );
    // The burst (20) and what refills (10 a second) while the claims are in flight, no more.
    const refilled = Math.ceil(((Date.now() - started) / 1000) * 10);
    expect(all.filter((ok) => ok).length).toBeGreaterThanOrEqual(20);
    expect(all.filter((ok) => ok).length).toBeLessThanOrEqual(20 + refilled + 1);
  });
});
