/**
 * Statistics for A/B experiments: sticky bucketing, two-proportion lift with confidence
 * intervals, and the sample-ratio-mismatch (SRM) check. Pure functions, Node built-ins only.
 */
import { createHash } from 'node:crypto';

/** Number of buckets users are hashed into; a variant with p % of traffic owns p·100 of them. */
const BUCKETS = 10_000;

/**
 * The user's bucket in 0..9999 for this experiment: sha256 of `${experimentId}:${userId}`,
 * first 4 bytes as a big-endian uint32, mod 10000. Same input, same bucket, on any machine.
 */
export function bucketOf(experimentId: number, userId: string): number {
  const digest = createHash('sha256').update(`${experimentId}:${userId}`).digest();
  return digest.readUInt32BE(0) % BUCKETS;
}

/**
 * The variant the user sees: variants own consecutive bucket ranges in list order, each
 * round(cumulative traffic_percent · 100) wide; the last variant takes every bucket past
 * the others (so it absorbs rounding, and any shortfall if the percents sum below 100).
 * Throws if `variants` is empty or a percent is negative or not finite.
 */
export function variantFor<T extends { traffic_percent: number }>(experimentId: number, userId: string, variants: readonly T[]): { index: number; variant: T } {
  const last = variants.length - 1;
  const lastVariant = variants[last];
  if (lastVariant === undefined) throw new RangeError('variantFor: no variants');
  for (const v of variants) {
    if (!Number.isFinite(v.traffic_percent) || v.traffic_percent < 0) {
      throw new RangeError(`variantFor: invalid traffic_percent ${v.traffic_percent}`);
    }
  }
  const bucket = bucketOf(experimentId, userId);
  let cumulative = 0;
  for (let index = 0; index < last; index++) {
    const variant = variants[index] as T;
    cumulative += variant.traffic_percent;
    // Summed in percent and rounded once, so 2-decimal percents do not drift.
    if (bucket < Math.round(cumulative * (BUCKETS / 100))) return { index, variant };
  }
  return { index: last, variant: lastVariant };
}

/** Successes out of trials in one arm (e.g. converted users out of exposed users). */
export interface Arm {
  successes: number;
  trials: number;
}

/** Treatment-vs-control comparison; a field is null where it is undefined for the data. */
export interface Lift {
  /** successes / trials in control; null with 0 trials. */
  control_rate: number | null;
  /** successes / trials in treatment; null with 0 trials. */
  treatment_rate: number | null;
  /** treatment_rate − control_rate. */
  difference: number | null;
  /** Wald (unpooled) interval for the difference. */
  difference_ci: [number, number] | null;
  /** treatment_rate / control_rate − 1; null when the control rate is 0. */
  relative_lift: number | null;
  /** Delta-method interval on ln(ratio), mapped back; null when either arm has 0 successes. */
  relative_lift_ci: [number, number] | null;
}

/**
 * Absolute and relative lift of treatment over control, with two-sided intervals at
 * `confidence` (0 < confidence < 1): difference p1 − p0 ± z·√(p1(1−p1)/n1 + p0(1−p0)/n0);
 * relative lift exp(ln(p1/p0) ± z·√((1−p1)/(n1·p1) + (1−p0)/(n0·p0))) − 1.
 * Throws on negative or non-integer counts, or successes above trials.
 */
export function twoProportionLift(control: Arm, treatment: Arm, confidence = 0.95): Lift {
  checkArm('control', control);
  checkArm('treatment', treatment);
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`twoProportionLift: confidence ${confidence} not in (0, 1)`);
  }
  const z = inverseNormalCdf((1 + confidence) / 2);
  const n0 = control.trials;
  const n1 = treatment.trials;
  const p0 = n0 > 0 ? control.successes / n0 : null;
  const p1 = n1 > 0 ? treatment.successes / n1 : null;

  let difference: number | null = null;
  let difference_ci: [number, number] | null = null;
  if (p0 !== null && p1 !== null) {
    difference = p1 - p0;
    const half = z * Math.sqrt((p1 * (1 - p1)) / n1 + (p0 * (1 - p0)) / n0);
    difference_ci = [difference - half, difference + half];
  }

  let relative_lift: number | null = null;
  let relative_lift_ci: [number, number] | null = null;
  if (p0 !== null && p1 !== null && p0 > 0) {
    relative_lift = p1 / p0 - 1;
    if (p1 > 0) {
      const logRatio = Math.log(p1 / p0);
      const half = z * Math.sqrt((1 - p1) / (n1 * p1) + (1 - p0) / (n0 * p0));
      relative_lift_ci = [Math.exp(logRatio - half) - 1, Math.exp(logRatio + half) - 1];
    }
  }

  return { control_rate: p0, treatment_rate: p1, difference, difference_ci, relative_lift, relative_lift_ci };
}

function checkArm(name: string, arm: Arm): void {
  const { successes, trials } = arm;
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || successes > trials) {
    throw new RangeError(`twoProportionLift: ${name} needs integers 0 <= successes <= trials`);
  }
}

/**
 * P(X ≥ statistic) for X ~ chi-square with `degreesOfFreedom` (> 0): Q(k/2, x/2).
 * Throws on a negative or NaN statistic or a non-positive degrees of freedom.
 */
export function chiSquarePValue(statistic: number, degreesOfFreedom: number): number {
  if (!(degreesOfFreedom > 0) || !Number.isFinite(degreesOfFreedom)) {
    throw new RangeError(`chiSquarePValue: degrees of freedom ${degreesOfFreedom} must be > 0`);
  }
  if (!(statistic >= 0)) throw new RangeError(`chiSquarePValue: statistic ${statistic} must be >= 0`);
  if (statistic === Infinity) return 0;
  return upperRegularizedGamma(degreesOfFreedom / 2, statistic / 2);
}

/** Result of the sample-ratio-mismatch check. */
export interface SampleRatioMismatch {
  /** Pearson chi-square statistic, Σ (observed − expected)² / expected. */
  statistic: number;
  /** Upper-tail p-value with k − 1 degrees of freedom (k = variants with a positive share). */
  p_value: number;
  /** p_value < threshold: the observed split is unlikely under the configured one. */
  mismatch: boolean;
}

/**
 * Chi-square goodness of fit of observed counts per variant against the configured split.
 * Shares are normalised by their sum (fractions or percents both work). Counts in a variant
 * configured at 0 % make the statistic infinite (p = 0, mismatch). Null when the total count
 * is 0 or fewer than 2 variants have a positive share. Throws on mismatched lengths,
 * negative or non-finite counts or shares, or shares summing to 0.
 */
export function sampleRatioMismatch(observed: readonly number[], expectedShares: readonly number[], threshold = 0.001): SampleRatioMismatch | null {
  if (observed.length !== expectedShares.length) {
    throw new RangeError('sampleRatioMismatch: observed and expectedShares differ in length');
  }
  const bad = (v: number) => !Number.isFinite(v) || v < 0;
  if (observed.some(bad) || expectedShares.some(bad)) {
    throw new RangeError('sampleRatioMismatch: counts and shares must be finite and >= 0');
  }
  const shareSum = expectedShares.reduce((a, b) => a + b, 0);
  if (observed.length > 0 && shareSum <= 0) throw new RangeError('sampleRatioMismatch: shares sum to 0');
  const total = observed.reduce((a, b) => a + b, 0);
  const k = expectedShares.filter((s) => s > 0).length;
  if (total === 0 || k < 2) return null;

  let statistic = 0;
  for (let i = 0; i < observed.length; i++) {
    const o = observed[i] as number;
    const expected = (total * (expectedShares[i] as number)) / shareSum;
    if (expected > 0) statistic += (o - expected) ** 2 / expected;
    else if (o > 0) statistic = Infinity;
  }
  const p_value = chiSquarePValue(statistic, k - 1);
  return { statistic, p_value, mismatch: p_value < threshold };
}

// ---------------------------------------------------------------------------------------
// Special functions.

const EPS = 1e-15;
const FPMIN = 1e-300;
const MAX_ITERATIONS = 100_000;

/** Lanczos coefficients (g = 7, n = 9), relative accuracy about 1e-15. */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos; reflection below 0.5). */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const y = x - 1;
  let sum = LANCZOS[0] as number;
  for (let i = 1; i < LANCZOS.length; i++) sum += (LANCZOS[i] as number) / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** Q(a, x) = Γ(a, x) / Γ(a) for a > 0, x ≥ 0: series for x < a + 1, continued fraction otherwise. */
function upperRegularizedGamma(a: number, x: number): number {
  if (x === 0) return 1;
  const prefactor = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    // P(a, x) = e^−x x^a / Γ(a) · Σ x^n / (a (a+1) … (a+n)).
    let ap = a;
    let term = 1 / a;
    let sum = term;
    for (let n = 0; n < MAX_ITERATIONS; n++) {
      ap += 1;
      term *= x / ap;
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPS) return Math.max(0, 1 - sum * prefactor);
    }
  } else {
    // Modified Lentz evaluation of the continued fraction for Q(a, x).
    let b = x + 1 - a;
    let c = 1 / FPMIN;
    let d = 1 / b;
    let h = d;
    for (let i = 1; i < MAX_ITERATIONS; i++) {
      const an = -i * (i - a);
      b += 2;
      d = an * d + b;
      if (Math.abs(d) < FPMIN) d = FPMIN;
      c = b + an / c;
      if (Math.abs(c) < FPMIN) c = FPMIN;
      d = 1 / d;
      const delta = d * c;
      h *= delta;
      if (Math.abs(delta - 1) < EPS) return Math.min(1, prefactor * h);
    }
  }
  throw new Error(`upperRegularizedGamma(${a}, ${x}) did not converge`);
}

/** Φ(x), the standard normal CDF, as ½·erfc(−x/√2) with erfc(y) = Q(½, y²) for y ≥ 0. */
function normalCdf(x: number): number {
  const tail = 0.5 * upperRegularizedGamma(0.5, (x * x) / 2);
  return x < 0 ? tail : 1 - tail;
}

/** Acklam's rational approximation coefficients. */
const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];

/** Evaluates c[0]·xⁿ + … + c[n] (Horner). */
function poly(c: readonly number[], x: number): number {
  let r = 0;
  for (const v of c) r = r * x + v;
  return r;
}

/** Φ⁻¹(p) for 0 < p < 1: Acklam's approximation (rel. error < 1.2e-9) plus one Halley step. */
function inverseNormalCdf(p: number): number {
  const low = 0.02425;
  let x: number;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = poly(C, q) / (poly(D, q) * q + 1);
  } else if (p <= 1 - low) {
    const q = p - 0.5;
    const r = q * q;
    x = (poly(A, r) * q) / (poly(B, r) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -poly(C, q) / (poly(D, q) * q + 1);
  }
  const e = normalCdf(x) - p;
  const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return x - u / (1 + (x * u) / 2);
}
