import { describe, expect, it } from 'vitest';
import { attributeEvents, erasureOf, type ExposureRecord, type ExposureStore, type VariantTotals } from '../../shared/control/exposures.ts';
import { experimentResults } from '../../shared/control/results.ts';
import { bucketOf, chiSquarePValue, sampleRatioMismatch, twoProportionLift, variantFor } from '../../shared/control/stats.ts';
import type { Experiment } from '../../shared/control/types.ts';
import type { EventRecord } from '../../shared/domain/types.ts';
import { storedEvent } from '../helpers/fixtures.ts';

/** The first synthetic user id (`u<n>`) that lands in `bucket` of experiment `exp`. */
function userInBucket(exp: number, bucket: number): string {
  for (let n = 0; n < 1_000_000; n++) if (bucketOf(exp, `u${n}`) === bucket) return `u${n}`;
  throw new Error(`no user found in bucket ${bucket}`);
}

/** Share of 100,000 synthetic users assigned to each variant index. */
function shares(exp: number, percents: readonly number[]): number[] {
  const variants = percents.map((traffic_percent) => ({ traffic_percent }));
  const counts = percents.map(() => 0);
  const users = 100_000;
  for (let n = 0; n < users; n++) {
    const { index } = variantFor(exp, `user-${n}`, variants);
    counts[index] = (counts[index] ?? 0) + 1;
  }
  return counts.map((c) => c / users);
}

describe('erasureOf', () => {
  it("is the user's erasure's end, Infinity while it runs (a membership recorded meanwhile is the erasure's to delete), and its start; nothing for a user never erased", () => {
    expect(erasureOf(undefined)).toEqual({});
    expect(erasureOf({ user_id: 'u', requested_at: 100, completed_at: null, models_checked_through: 0 })).toEqual({ erasedThrough: Number.POSITIVE_INFINITY, erasureBegan: 100 });
    expect(erasureOf({ user_id: 'u', requested_at: 100, completed_at: 130, models_checked_through: 4, events_through: 9 })).toEqual({ erasedThrough: 130, erasureBegan: 100 });
  });
});

describe('bucketOf', () => {
  it('is sha256(`${experimentId}:${userId}`) first 4 bytes big-endian mod 10000', () => {
    // Reference values from Python: int.from_bytes(hashlib.sha256(b'42:user-1').digest()[:4], 'big') % 10000.
    expect(bucketOf(42, 'user-1')).toBe(1707);
    expect(bucketOf(7, 'alice')).toBe(6425);
  });

  it('is stable for the same input and stays in 0..9999', () => {
    for (let n = 0; n < 1000; n++) {
      const b = bucketOf(3, `user-${n}`);
      expect(bucketOf(3, `user-${n}`)).toBe(b);
      expect(Number.isInteger(b) && b >= 0 && b < 10_000).toBe(true);
    }
  });

  it('depends on the experiment: the same user is re-shuffled across experiments', () => {
    let same = 0;
    for (let n = 0; n < 1000; n++) if (bucketOf(1, `user-${n}`) === bucketOf(2, `user-${n}`)) same++;
    expect(same).toBeLessThan(5); // ~0.1 expected by chance
  });

  it('spreads users uniformly: 10 deciles of 100,000 users each hold 9.5–10.5 %', () => {
    const deciles = new Array<number>(10).fill(0);
    for (let n = 0; n < 100_000; n++) {
      const d = Math.floor(bucketOf(11, `user-${n}`) / 1000);
      deciles[d] = (deciles[d] ?? 0) + 1;
    }
    for (const c of deciles) {
      expect(c / 100_000).toBeGreaterThan(0.095);
      expect(c / 100_000).toBeLessThan(0.105);
    }
  });
});

describe('variantFor', () => {
  it('splits 100,000 users 50/50 within 49–51 %', () => {
    const [a, b] = shares(5, [50, 50]);
    expect(a).toBeGreaterThan(0.49);
    expect(a).toBeLessThan(0.51);
    expect(b).toBeGreaterThan(0.49);
    expect(b).toBeLessThan(0.51);
  });

  it('respects a 10/90 split within half a point', () => {
    const [a, b] = shares(6, [10, 90]);
    expect(Math.abs((a ?? 0) - 0.1)).toBeLessThan(0.005);
    expect(Math.abs((b ?? 0) - 0.9)).toBeLessThan(0.005);
  });

  it('respects fractional percents (33.33/33.33/33.34) within half a point', () => {
    for (const s of shares(8, [33.33, 33.33, 33.34])) expect(Math.abs(s - 1 / 3)).toBeLessThan(0.005);
  });

  it('gives a 10/90 split buckets 0..999 and 1000..9999 exactly', () => {
    const variants = [
      { name: 'control', traffic_percent: 10 },
      { name: 'treatment', traffic_percent: 90 },
    ] as const;
    expect(variantFor(9, userInBucket(9, 0), variants).index).toBe(0);
    expect(variantFor(9, userInBucket(9, 999), variants).index).toBe(0);
    const r = variantFor(9, userInBucket(9, 1000), variants);
    expect(r.index).toBe(1);
    expect(r.variant.name).toBe('treatment'); // the variant object itself, typed as given
    expect(variantFor(9, userInBucket(9, 9999), variants).index).toBe(1);
  });

  it('rounds 2-decimal percents to whole buckets: 12.34 % owns buckets 0..1233', () => {
    const variants = [{ traffic_percent: 12.34 }, { traffic_percent: 87.66 }];
    expect(variantFor(9, userInBucket(9, 1233), variants).index).toBe(0);
    expect(variantFor(9, userInBucket(9, 1234), variants).index).toBe(1);
  });

  it('gives a percent its whole buckets where the product in floating point falls just short or just past: 0.29 % owns 0..28, 0.07 % owns 0..6', () => {
    // 0.29 × 100 is 28.999999999999996: truncating it (floor) would give that variant 28 buckets, not 29.
    const short = [{ traffic_percent: 0.29 }, { traffic_percent: 99.71 }];
    expect(variantFor(9, userInBucket(9, 28), short).index).toBe(0);
    expect(variantFor(9, userInBucket(9, 29), short).index).toBe(1);
    // 0.07 × 100 is 7.000000000000001: rounding it up (ceil) would give that variant 8 buckets, not 7.
    const past = [{ traffic_percent: 0.07 }, { traffic_percent: 99.93 }];
    expect(variantFor(9, userInBucket(9, 6), past).index).toBe(0);
    expect(variantFor(9, userInBucket(9, 7), past).index).toBe(1);
  });

  it('lets the last variant absorb rounding (33.33 × 3 leaves bucket 9999 to the last)', () => {
    const variants = [{ traffic_percent: 33.33 }, { traffic_percent: 33.33 }, { traffic_percent: 33.33 }];
    expect(variantFor(9, userInBucket(9, 9998), variants).index).toBe(2);
    expect(variantFor(9, userInBucket(9, 9999), variants).index).toBe(2);
    expect(variantFor(9, userInBucket(9, 3332), variants).index).toBe(0);
    expect(variantFor(9, userInBucket(9, 3333), variants).index).toBe(1);
    expect(variantFor(9, userInBucket(9, 6666), variants).index).toBe(2);
  });

  it('never assigns a 0 % variant', () => {
    const [a, b, c] = shares(10, [0, 100, 0]);
    expect([a, b, c]).toEqual([0, 1, 0]);
  });

  it('rejects an empty list and negative or non-finite percents', () => {
    expect(() => variantFor(1, 'u', [])).toThrow(RangeError);
    expect(() => variantFor(1, 'u', [{ traffic_percent: -1 }, { traffic_percent: 101 }])).toThrow(RangeError);
    expect(() => variantFor(1, 'u', [{ traffic_percent: Number.NaN }])).toThrow(RangeError);
  });
});

describe('twoProportionLift', () => {
  // Control 200/1000 (p0 = 0.2), treatment 250/1000 (p1 = 0.25), z = Φ⁻¹(0.975) = 1.959963985.
  const control = { successes: 200, trials: 1000 };
  const treatment = { successes: 250, trials: 1000 };

  it('matches the hand-worked 200/1000 vs 250/1000 example at 95 %', () => {
    const r = twoProportionLift(control, treatment);
    expect(r.control_rate).toBeCloseTo(0.2, 12);
    expect(r.treatment_rate).toBeCloseTo(0.25, 12);
    expect(r.difference).toBeCloseTo(0.05, 12);
    // se = √(0.25·0.75/1000 + 0.2·0.8/1000) = √(0.0003475) = 0.0186413519;
    // 0.05 ± 1.959963985 · 0.0186413519 = 0.05 ± 0.0365363783 = [0.0134636217, 0.0865363783].
    const [dLo, dHi] = r.difference_ci ?? [Number.NaN, Number.NaN];
    expect(dLo).toBeCloseTo(0.0134636217, 8);
    expect(dHi).toBeCloseTo(0.0865363783, 8);
    expect(r.relative_lift).toBeCloseTo(0.25, 12);
    // ln(1.25) = 0.2231435513; se = √(0.75/(1000·0.25) + 0.8/(1000·0.2)) = √(0.003 + 0.004) = 0.0836660027;
    // z·se = 0.1639823551; exp(0.0591611962) − 1 = 0.0609462508, exp(0.3871259064) − 1 = 0.4727419026.
    const [rLo, rHi] = r.relative_lift_ci ?? [Number.NaN, Number.NaN];
    expect(rLo).toBeCloseTo(0.0609462508, 8);
    expect(rHi).toBeCloseTo(0.4727419026, 8);
  });

  it('uses z = Φ⁻¹((1 + confidence) / 2) accurate to 1e-9', () => {
    const se = Math.sqrt(0.0003475);
    const halfWidth = (c: number) => {
      const ci = twoProportionLift(control, treatment, c).difference_ci ?? [Number.NaN, Number.NaN];
      return (ci[1] - ci[0]) / 2 / se;
    };
    // Standard normal quantiles (tables): z(0.975), z(0.995), z(0.95), z(0.9995), z(0.75).
    expect(Math.abs(halfWidth(0.95) - 1.959963985)).toBeLessThan(1e-9);
    expect(Math.abs(halfWidth(0.99) - 2.5758293035)).toBeLessThan(1e-9);
    expect(Math.abs(halfWidth(0.9) - 1.644853627)).toBeLessThan(1e-9);
    expect(Math.abs(halfWidth(0.999) - 3.2905267315)).toBeLessThan(1e-9);
    // Far tail: p = 1 − 5e-10 is only held to ~1e-16 absolute in a double, so z to ~1e-7.
    expect(Math.abs(halfWidth(1 - 1e-9) - 6.1094101917)).toBeLessThan(1e-7);
    expect(Math.abs(halfWidth(0.5) - 0.6744897502)).toBeLessThan(1e-9);
  });

  it('is symmetric in sign when the arms swap', () => {
    const r = twoProportionLift(treatment, control);
    expect(r.difference).toBeCloseTo(-0.05, 12);
    expect(r.difference_ci?.[0]).toBeCloseTo(-0.0865363783, 8);
    expect(r.relative_lift).toBeCloseTo(-0.2, 12);
  });

  it('returns null for what is undefined: no trials, zero control rate, zero successes', () => {
    const noControl = twoProportionLift({ successes: 0, trials: 0 }, treatment);
    expect(noControl).toEqual({
      control_rate: null,
      treatment_rate: 0.25,
      difference: null,
      difference_ci: null,
      relative_lift: null,
      relative_lift_ci: null,
    });

    const zeroControl = twoProportionLift({ successes: 0, trials: 1000 }, treatment);
    expect(zeroControl.control_rate).toBe(0);
    expect(zeroControl.difference).toBeCloseTo(0.25, 12);
    expect(zeroControl.difference_ci).not.toBeNull();
    expect(zeroControl.relative_lift).toBeNull();
    expect(zeroControl.relative_lift_ci).toBeNull();

    const zeroTreatment = twoProportionLift(control, { successes: 0, trials: 1000 });
    expect(zeroTreatment.relative_lift).toBeCloseTo(-1, 12);
    expect(zeroTreatment.relative_lift_ci).toBeNull();

    const noTreatment = twoProportionLift(control, { successes: 0, trials: 0 });
    expect(noTreatment.treatment_rate).toBeNull();
    expect(noTreatment.difference).toBeNull();
    expect(noTreatment.relative_lift).toBeNull();
  });

  it('rejects impossible counts and confidences', () => {
    expect(() => twoProportionLift({ successes: 5, trials: 4 }, treatment)).toThrow(RangeError);
    expect(() => twoProportionLift({ successes: -1, trials: 4 }, treatment)).toThrow(RangeError);
    expect(() => twoProportionLift(control, { successes: 1.5, trials: 4 })).toThrow(RangeError);
    expect(() => twoProportionLift(control, treatment, 1)).toThrow(RangeError);
    expect(() => twoProportionLift(control, treatment, 0)).toThrow(RangeError);
  });
});

describe('chiSquarePValue', () => {
  it('matches chi-square table critical values', () => {
    // Upper-tail critical values (standard tables); p-values to the tables' precision.
    expect(chiSquarePValue(3.841459, 1)).toBeCloseTo(0.05, 7);
    expect(chiSquarePValue(6.634897, 1)).toBeCloseTo(0.01, 7);
    expect(chiSquarePValue(10.828, 1)).toBeCloseTo(0.001, 6);
    expect(chiSquarePValue(5.991465, 2)).toBeCloseTo(0.05, 7);
    expect(chiSquarePValue(11.0705, 5)).toBeCloseTo(0.05, 6);
    expect(chiSquarePValue(18.307, 10)).toBeCloseTo(0.05, 5);
    expect(chiSquarePValue(124.342, 100)).toBeCloseTo(0.05, 5);
  });

  it('matches lower-tail table values (the series branch, x < k/2 + 1)', () => {
    expect(chiSquarePValue(2.558, 10)).toBeCloseTo(0.99, 5); // χ²₀.₉₉(10) = 2.558
    expect(chiSquarePValue(77.929, 100)).toBeCloseTo(0.95, 5); // χ²₀.₉₅(100) = 77.929
  });

  it('matches closed forms: df 2 is exp(−x/2), df 1 is 2·(1 − Φ(√x))', () => {
    for (const x of [0.1, 1, 2.5, 7, 30]) expect(chiSquarePValue(x, 2)).toBeCloseTo(Math.exp(-x / 2), 12);
    expect(chiSquarePValue(1, 1)).toBeCloseTo(0.3173105079, 9); // 2·(1 − Φ(1))
    expect(chiSquarePValue(4, 1)).toBeCloseTo(0.0455002639, 9); // 2·(1 − Φ(2))
    expect(chiSquarePValue(9, 1)).toBeCloseTo(0.0026997961, 9); // 2·(1 − Φ(3))
    // df 4: Q(2, x/2) = e^(−x/2)·(1 + x/2).
    for (const x of [0.5, 3, 9.487729]) expect(chiSquarePValue(x, 4)).toBeCloseTo(Math.exp(-x / 2) * (1 + x / 2), 12);
  });

  it('is 1 at x = 0, 0 at infinity, and tiny far in the tail', () => {
    expect(chiSquarePValue(0, 1)).toBe(1);
    expect(chiSquarePValue(0, 7)).toBe(1);
    expect(chiSquarePValue(Infinity, 3)).toBe(0);
    const p = chiSquarePValue(40, 1); // 2·(1 − Φ(√40)) = 2.5396e-10
    expect(p / 2.5396285895e-10).toBeCloseTo(1, 8);
  });

  it('rejects negative or NaN statistics and non-positive degrees of freedom', () => {
    expect(() => chiSquarePValue(-1, 1)).toThrow(RangeError);
    expect(() => chiSquarePValue(Number.NaN, 1)).toThrow(RangeError);
    expect(() => chiSquarePValue(1, 0)).toThrow(RangeError);
  });
});

describe('sampleRatioMismatch', () => {
  it('finds no mismatch for an exact 50/50 split (statistic 0, p = 1)', () => {
    expect(sampleRatioMismatch([500, 500], [0.5, 0.5])).toEqual({ statistic: 0, p_value: 1, mismatch: false });
  });

  it('[550, 450] vs 50/50: statistic 10, p = 2·(1 − Φ(√10)) = 0.0015654, not a mismatch at 0.001', () => {
    // (550 − 500)²/500 + (450 − 500)²/500 = 5 + 5 = 10.
    const r = sampleRatioMismatch([550, 450], [50, 50]);
    expect(r?.statistic).toBeCloseTo(10, 12);
    expect(r?.p_value).toBeCloseTo(0.0015654023, 9);
    expect(r?.mismatch).toBe(false);
    expect(sampleRatioMismatch([550, 450], [50, 50], 0.01)?.mismatch).toBe(true);
  });

  it('[600, 400] vs 50/50: statistic 40, a mismatch', () => {
    const r = sampleRatioMismatch([600, 400], [0.5, 0.5]);
    expect(r?.statistic).toBeCloseTo(40, 12);
    expect(r?.p_value).toBeLessThan(1e-9);
    expect(r?.mismatch).toBe(true);
  });

  it('normalises percents and fractions alike', () => {
    const a = sampleRatioMismatch([130, 870], [10, 90]);
    const b = sampleRatioMismatch([130, 870], [0.1, 0.9]);
    // (130 − 100)²/100 + (870 − 900)²/900 = 9 + 1 = 10.
    expect(a?.statistic).toBeCloseTo(10, 12);
    expect(b?.statistic).toBeCloseTo(10, 12);
    expect(a?.p_value).toBeCloseTo(b?.p_value ?? Number.NaN, 14);
  });

  it('uses k − 1 degrees of freedom over the positive-share variants', () => {
    // Three 1/3 arms: (110−100)²/100 + (90−100)²/100 + 0 = 2; df 2 → p = e^(−1) = 0.3678794412.
    expect(sampleRatioMismatch([110, 90, 100], [1, 1, 1])?.p_value).toBeCloseTo(Math.exp(-1), 12);
    // A 0 % arm with no users does not add a degree of freedom: same as [550, 450] vs 50/50.
    expect(sampleRatioMismatch([550, 0, 450], [50, 0, 50])?.p_value).toBeCloseTo(0.0015654023, 9);
  });

  it('flags users in a 0 % arm as a mismatch', () => {
    expect(sampleRatioMismatch([500, 1, 500], [50, 0, 50])).toEqual({ statistic: Infinity, p_value: 0, mismatch: true });
  });

  it('returns null with no users or fewer than two variants', () => {
    expect(sampleRatioMismatch([0, 0], [0.5, 0.5])).toBeNull();
    expect(sampleRatioMismatch([100], [1])).toBeNull();
    expect(sampleRatioMismatch([], [])).toBeNull();
    expect(sampleRatioMismatch([100, 0], [100, 0])).toBeNull();
  });

  it('rejects mismatched lengths, negative counts and all-zero shares', () => {
    expect(() => sampleRatioMismatch([1, 2], [1])).toThrow(RangeError);
    expect(() => sampleRatioMismatch([-1, 2], [1, 1])).toThrow(RangeError);
    expect(() => sampleRatioMismatch([1, 2], [0, 0])).toThrow(RangeError);
  });
});

describe('experimentResults', () => {
  const exp: Experiment = {
    id: 1,
    name: 'e',
    context_id: 1,
    segment_id: null,
    variants: [
      { name: 'a', endpoint_name: 'main', traffic_percent: 50 },
      { name: 'b', endpoint_name: 'next', traffic_percent: 50 },
    ],
    status: 'Running',
    attribution_window_seconds: 86_400,
    started_at: 1,
    stopped_at: null,
    created: 1,
    updated_at: 1,
  };
  const storeOf = (totals: Map<number, VariantTotals>) => ({ totals: async () => totals }) as unknown as ExposureStore;

  it('answers when a variant counts more users with an event than users (a membership row written, its users count lost): no 500 for the list', async () => {
    // Variant b: a user's row was written by a request cut off before the totals' write, and they converted.
    const totals = new Map<number, VariantTotals>([
      [0, { requests: 10, users: 4, events: { click: 2 }, requestsWith: { click: 2 }, usersWith: { click: 2 } }],
      [1, { requests: 3, users: 0, events: { click: 1 }, requestsWith: { click: 1 }, usersWith: { click: 1 } }],
    ]);
    const r = await experimentResults(storeOf(totals), 't', exp);
    const b = r.variants[1]!;
    expect(b).toMatchObject({ requests: 3, users: 0 });
    expect(b.events.click).toMatchObject({ events: 1, users_with_event: 1, rate_per_user: null });
    // The lift takes the converted user as one of b's: 1 of 1 against 2 of 4.
    expect(b.events.click!.lift).toMatchObject({ relative: 1, difference: 0.5 });
    // Consistent counts are as before.
    totals.set(1, { requests: 3, users: 2, events: { click: 1 }, requestsWith: { click: 1 }, usersWith: { click: 1 } });
    expect((await experimentResults(storeOf(totals), 't', exp)).variants[1]!.events.click!.lift).toMatchObject({ relative: 0, difference: 0 });
  });
});

describe('attributeEvents', () => {
  const SERVED = 1_800_000_000;
  const exposure: ExposureRecord = { requestId: 'aaaaaaaa-0000-4000-8000-000000000001', experimentId: 1, variant: 1, userId: 'u1', servedAt: SERVED, attributeUntil: SERVED + 3600 };
  /** A store holding the one exposure, recording which event ids it was asked to count. */
  const storeOf = () => {
    const counted: number[] = [];
    const store = {
      exposure: async (_t: string, id: string) => (id === exposure.requestId ? exposure : undefined),
      attribute: async (_t: string, _x: ExposureRecord, e: { id: number }) => {
        counted.push(e.id);
        return true;
      },
    } as unknown as ExposureStore;
    return { store, counted };
  };
  const event = (id: number, created: number, over: Partial<EventRecord> = {}) => storedEvent(id, exposure.requestId, created, over);

  it('counts the events of the user served that were ingested within the attribution window, and no others', async () => {
    const { store, counted } = storeOf();
    const n = await attributeEvents(store, 't', [
      event(1, SERVED + 10),
      // The window's last second counts; the one after it does not (docs/api.md: ingested within attribution_window_seconds).
      event(2, SERVED + 3600),
      event(3, SERVED + 3601),
      event(4, SERVED + 86_400 * 30),
      // Long before the request was served: no response it followed.
      event(5, SERVED - 3600),
      // Another user naming the request counts for nobody.
      event(6, SERVED + 10, { user_id: 'u2' }),
      // The request id in upper case is the same request.
      event(7, SERVED + 20, { request_id: exposure.requestId.toUpperCase() }),
      // A request served in no experiment.
      event(8, SERVED + 10, { request_id: 'bbbbbbbb-0000-4000-8000-000000000002' }),
    ]);
    expect(counted).toEqual([1, 2, 7]);
    expect(n).toBe(3);
  });
});
