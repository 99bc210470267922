/**
 * The serving pipeline that recommendations and search share once a request names a context:
 * their candidates and base scores come in; the context's rules (boosts, exclusions), then its
 * rerank controls (exclude seen, popularity and freshness, diversity, at most so many per
 * category) turn them into the order served, with, on request, why each item is where it is.
 * Pure: what it needs of the catalog and the user comes in as functions.
 */
import { metadataReader } from '../domain/metadata-path.ts';
import { asNfc, holdsAnyNfc, holdsNfc, nfc } from '../domain/nfc.ts';
import type { SearchDoc } from '../search/types.ts';
import type { Condition, RerankControls, Rule } from './types.ts';

export interface Candidate {
  id: number;
  /** The base score (model, content or text relevance), higher is better. */
  score: number;
  doc: SearchDoc;
  /**
   * Lifted above every other candidate by its ranking (search's names first: its name is the
   * query, or begins with it): popularity, freshness and diversity take the others' best score
   * as the relevance of 1, so that whether a named item is there does not change how the others
   * weigh against their popularity.
   */
  lifted?: boolean;
}

export interface RuleApplied {
  id: number;
  name: string;
  boost: number;
}
export type RerankStep = { control: 'popularity_weight' | 'freshness_weight'; added: number } | { control: 'diversity' | 'max_per_category'; moved_from: number; moved_to: number };
export interface Explanation {
  base_score: number;
  rules: RuleApplied[];
  score_after_rules: number;
  rerank: RerankStep[];
  final_score: number;
  experiment: { id: number; variant: string } | null;
}

export interface Served {
  id: number;
  score: number;
  doc: SearchDoc;
  explain: Explanation;
  lifted?: boolean;
}

/** The score that counts as a relevance of 1: the best of the candidates not lifted (of all, when every one is). */
function relevanceMax(items: readonly Served[]): number {
  let max = 0;
  let all = 0;
  for (const it of items) {
    if (it.score > all) all = it.score;
    if (!it.lifted && it.score > max) max = it.score;
  }
  return max > 0 ? max : all;
}

export interface PipelineHelpers {
  /** 0-1 popularity of an item (only asked when popularity_weight is set). */
  popularity?: (id: number) => number;
  /** Whether the user interacted with the item (only asked when exclude_seen is set). */
  seen?: (id: number) => boolean;
  /**
   * Cosine similarity to `a` of any candidate (only asked when diversity is set): made once per
   * item chosen, then asked of the candidates compared with it.
   */
  similarity?: (a: Candidate) => (b: Candidate) => number;
  /** Unix seconds now (freshness, rule windows). */
  now: number;
  /** How many of the first positions the caller shows (diversity orders those; default 20). */
  depth?: number;
  /**
   * How many of the best candidates diversity chooses among (default max(2 × depth, 50)). A caller
   * that shows one list a page at a time fixes it for every page: with the same candidates, the
   * first positions diversity chooses do not depend on how many it chooses, so each page is the
   * continuation of the one before.
   */
  diversityPool?: number;
}

/** Freshness halves every this many days of age (`created`). */
export const FRESHNESS_HALF_LIFE_DAYS = 14;
/**
 * Diversity chooses the first `depth` positions (at most 100) by maximal marginal relevance
 * among the best max(2 × depth, 50) candidates (its cost is candidates × positions × dimensions);
 * the rest follow in score order.
 */
const DIVERSITY_MAX = 100;

/** A field as a reader of its value on an item: `category`, `name`, `created`, `metadata.a.b`. */
function fieldReader(field: string): (doc: SearchDoc) => unknown {
  if (field === 'category') return (d) => d.metadata.category;
  if (field === 'name') return (d) => d.name;
  if (field === 'created') return (d) => d.created;
  if (!field.startsWith('metadata.')) return () => undefined;
  // As search filters, facets and sort read it (one resolver: a key so spelled, else a path).
  const read = metadataReader(field.slice('metadata.'.length));
  return (d) => read(d.metadata);
}

/**
 * A number that passes `test`, or a list holding one, as search's `gt`/`lt` filters read a list
 * (until 2026-12-07 a rule's `gte`/`lte` never held for a list, where a search filter did).
 */
const someNumber = (v: unknown, test: (n: number) => boolean): boolean => (Array.isArray(v) ? v.some((x) => typeof x === 'number' && test(x)) : typeof v === 'number' && test(v));

/** A condition as a test of an item: its field's reader and its operator, put together once. */
function testOf(c: Condition): (doc: SearchDoc) => boolean {
  const read = fieldReader(c.field);
  const want = c.value;
  // A field value equals a scalar: itself, or (a list) one of its elements; strings compared in
  // NFC, as search's filters compare them (until 2026-12-07 as sent: "Café" with e and U+0301
  // missed the items holding a composed é, which a search filter on it matched).
  switch (c.op) {
    case 'eq': {
      const is = asNfc(want);
      return (d) => holdsNfc(read(d), is);
    }
    case 'neq': {
      const is = asNfc(want);
      return (d) => !holdsNfc(read(d), is);
    }
    case 'in': {
      if (!Array.isArray(want)) return () => false;
      const wanted = new Set<unknown>(want.map(asNfc));
      return (d) => holdsAnyNfc(read(d), wanted);
    }
    case 'gte':
      return typeof want === 'number' ? (d) => someNumber(read(d), (n) => n >= want) : () => false;
    case 'lte':
      return typeof want === 'number' ? (d) => someNumber(read(d), (n) => n <= want) : () => false;
    case 'exists':
      return (d) => {
        const v = read(d);
        return (v !== undefined && v !== null) === (want === true);
      };
  }
}

/**
 * Cache: each rule's conditions as one test, made once per rule object (rules are cached by the
 * serving side), so a pool of candidates costs no lookup per item and condition. Bound: held only
 * while its rule is (weak keys).
 */
const ruleTests = new WeakMap<Rule, (doc: SearchDoc) => boolean>();
function ruleTest(r: Rule): (doc: SearchDoc) => boolean {
  let t = ruleTests.get(r);
  if (!t) {
    const tests = r.conditions.map(testOf);
    t = (d) => {
      for (const test of tests) if (!test(d)) return false;
      return true;
    };
    ruleTests.set(r, t);
  }
  return t;
}

export const matches = (doc: SearchDoc, c: Condition): boolean => testOf(c)(doc);

/** Whether every condition of `r` holds for `doc` (the rule's cached test, as the pipeline applies it). */
export const ruleMatches = (r: Rule, doc: SearchDoc): boolean => ruleTest(r)(doc);

/** A rule in force at `now` (enabled, inside its window); segment membership is the caller's. */
export const inForce = (r: Rule, now: number): boolean => r.enabled && (r.starts_at === null || now >= r.starts_at) && (r.ends_at === null || now < r.ends_at);

const round = (x: number) => Number(x.toFixed(6));

/**
 * The most an item's boosts multiply its score by together (and 1 over it the least): 105 rules of
 * boost 1,000 multiplied past the largest number, and every score became Infinity, null in the
 * answer, in id order; 50 of 1e-7 made them 0. Beyond it items are ordered by their score alone
 * (their boosts all as much as this), so scores stay numbers, every answer (a pool and the pages
 * after it alike) keeps one scale, and items with fewer boosts keep theirs.
 */
const BOOST_RANGE = 1e150;
const LOG_BOOST_RANGE = Math.log(BOOST_RANGE);

/**
 * The base scores as the pipeline weighs them: positive, so that a boost above 1 raises an item and
 * one below 1 lowers it, and popularity and freshness add to relevance on a scale whose best is 1.
 * All positive (search's relevance, a model's scores): as they are. Otherwise (an item filling up
 * a list below a candidate scored 0 is scored below 0; a score that is no number at all, which
 * nothing should give, counts as the lowest) shifted up in order, the lowest to a thousandth of
 * their range above 0: multiplied as they came, boost 10 sank an item scored -0.5 to -5, below
 * every other, and NaN left the sort's order undefined.
 */
function positiveScores(candidates: readonly Candidate[]): (score: number) => number {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let odd = false;
  for (const c of candidates) {
    if (!Number.isFinite(c.score)) odd = true;
    else {
      if (c.score < min) min = c.score;
      if (c.score > max) max = c.score;
    }
  }
  if (!odd && min > 0) return (score) => score;
  if (min > max) return () => 1;
  const floor = (max - min > 0 ? max - min : 1) * 1e-3;
  return (score) => (Number.isFinite(score) ? score - min + floor : floor / 2);
}

/**
 * Orders `candidates` for a context: rules multiply the scores of the items they match (all
 * conditions must hold; boosts of several rules multiply; 0 excludes, however few remain), then
 * the rerank controls apply in a fixed order. Returns every candidate left, best first, each
 * with its final score (for diversity, the order is the answer; scores stay as they were). Scores
 * not all positive are first shifted up in order (`positiveScores`).
 */
export function runPipeline(candidates: readonly Candidate[], rules: readonly Rule[], controls: RerankControls, helpers: PipelineHelpers, experiment: Explanation['experiment']): Served[] {
  let items: Served[] = [];
  const tests = rules.map(ruleTest);
  const base = positiveScores(candidates);
  for (const c of candidates) {
    let boost = 1;
    let logBoost = 0;
    const applied: RuleApplied[] = [];
    let excluded = false;
    for (let k = 0; k < rules.length; k++) {
      if (!(tests[k] as (doc: SearchDoc) => boolean)(c.doc)) continue;
      const r = rules[k] as Rule;
      applied.push({ id: r.id, name: r.name, boost: r.boost });
      if (r.boost === 0) {
        excluded = true;
        break;
      }
      boost *= r.boost;
      logBoost += Math.log(r.boost);
    }
    if (excluded) continue;
    if (controls.exclude_seen && helpers.seen?.(c.id)) continue;
    // Within the range as multiplied, else its bound (from the logarithms: the product may be Infinity or 0).
    if (!(boost <= BOOST_RANGE && boost >= 1 / BOOST_RANGE)) boost = Math.exp(Math.max(-LOG_BOOST_RANGE, Math.min(LOG_BOOST_RANGE, logBoost)));
    const baseScore = base(c.score);
    const score = baseScore * boost;
    items.push({
      id: c.id,
      score,
      doc: c.doc,
      explain: { base_score: baseScore, rules: applied, score_after_rules: score, rerank: [], final_score: 0, experiment },
      ...(c.lifted ? { lifted: true } : {}),
    });
  }
  const byScore = (a: Served, b: Served) => b.score - a.score || a.id - b.id;

  const wp = controls.popularity_weight ?? 0;
  const wf = controls.freshness_weight ?? 0;
  if ((wp > 0 && helpers.popularity) || wf > 0) {
    // Additive on the relevance scaled to 0-1, so a weight of 1 weighs as much as the best item's relevance.
    const max = relevanceMax(items);
    const scale = max > 0 ? 1 / max : 1;
    for (const it of items) {
      let s = it.score * scale;
      if (wp > 0 && helpers.popularity) {
        const added = wp * helpers.popularity(it.id);
        s += added;
        it.explain.rerank.push({ control: 'popularity_weight', added });
      }
      if (wf > 0) {
        const ageDays = Math.max(0, helpers.now - it.doc.created) / 86_400;
        const added = wf * 0.5 ** (ageDays / FRESHNESS_HALF_LIFE_DAYS);
        s += added;
        it.explain.rerank.push({ control: 'freshness_weight', added });
      }
      it.score = s;
    }
  }
  items.sort(byScore);

  const lambda = controls.diversity ?? 0;
  const cap = controls.max_per_category;
  const scored = items;
  if (lambda > 0 && helpers.similarity && items.length > 2) {
    const depth = Math.min(DIVERSITY_MAX, helpers.depth ?? 20);
    items = diversify(items, lambda, helpers.similarity, depth, helpers.diversityPool ?? Math.max(2 * depth, 50), cap);
  } else if (cap !== undefined) items = withinCategoryCap(items, cap);
  if (cap !== undefined) explainCap(scored, items);
  for (const it of items) it.explain.final_score = it.score;
  return items;
}

/**
 * `max_per_category`'s step in the explanation of each item served above its place in the scored
 * order (`scored`) that diversity did not choose: only the cap moves such an item up, by leaving out
 * items of full categories above it. From that place (the base of diversity's steps too) to its own.
 */
function explainCap(scored: readonly Served[], served: readonly Served[]): void {
  const at = new Map<Served, number>();
  scored.forEach((it, i) => at.set(it, i));
  served.forEach((it, j) => {
    const i = at.get(it) as number;
    if (j < i && !it.explain.rerank.some((s) => s.control === 'diversity')) it.explain.rerank.push({ control: 'max_per_category', moved_from: i + 1, moved_to: j + 1 });
  });
}

/**
 * An item's categories for `max_per_category`: its metadata's `category`, a string or the strings of
 * a list (each once), as a rule's condition on `category` matches a list's elements. Until
 * 2026-12-07 only a string was, and an item whose category was a list was never limited.
 */
function categoriesOf(it: { doc: SearchDoc }): string[] {
  // In NFC, as conditions and search's filters compare them: until 2026-12-07 "Café" composed and
  // with e and U+0301 were two categories, each let through by the cap.
  const cat = it.doc.metadata.category;
  if (typeof cat === 'string') return [nfc(cat)];
  return Array.isArray(cat) ? [...new Set(cat.filter((c): c is string => typeof c === 'string').map(nfc))] : [];
}

/** Items per category: whether an item's categories have room for it (`cap` each), and counting it in each. */
function categoryCounts(cap: number) {
  const counts = new Map<string, number>();
  return {
    full: (it: { doc: SearchDoc }) => categoriesOf(it).some((c) => (counts.get(c) ?? 0) >= cap),
    add: (it: { doc: SearchDoc }) => {
      for (const c of categoriesOf(it)) counts.set(c, (counts.get(c) ?? 0) + 1);
    },
  };
}

/**
 * `max_per_category`: the items in order, each left out once any of its categories holds `cap`
 * items (an item counts in each of its categories), counting the items `before` them (served
 * already) first.
 */
export function withinCategoryCap<T extends { doc: SearchDoc }>(items: readonly T[], cap: number, before: readonly { doc: SearchDoc }[] = []): T[] {
  const counts = categoryCounts(cap);
  for (const it of before) counts.add(it);
  return items.filter((it) => {
    if (counts.full(it)) return false;
    counts.add(it);
    return true;
  });
}

/** An explanation as shown: scores to 6 decimals (computed only for the items answered with `explain`). */
export function presentExplain(e: Explanation): Explanation {
  return {
    ...e,
    base_score: round(e.base_score),
    score_after_rules: round(e.score_after_rules),
    rerank: e.rerank.map((r) => ('added' in r ? { ...r, added: round(r.added) } : r)),
    final_score: round(e.final_score),
  };
}

/**
 * Maximal marginal relevance: each of the first `depth` positions goes to the candidate among the
 * best `size` that maximises (1 − λ)·relevance − λ·(its highest cosine similarity to an item
 * already chosen), relevance scaled to 0-1 (see DIVERSITY_MAX). The rest follow in score order.
 * With `max_per_category` (`cap`), a candidate one of whose categories is full is left out as it comes up,
 * not chosen: the choices, and so every position, are the same whatever `depth` (a page further
 * on extends the list, never reorders it). Lazy greedy: a candidate's similarity only grows as
 * items are chosen, so its value only falls; a candidate is compared with the items chosen since
 * it was last looked at only when it leads (the same choices as comparing every candidate at
 * every step, at a fraction of the work).
 */
function diversify(items: Served[], lambda: number, similarity: (a: Candidate) => (b: Candidate) => number, depth: number, size: number, cap: number | undefined): Served[] {
  const pool = items.slice(0, size);
  const rest = items.slice(size);
  const max = Math.max(relevanceMax(pool), 1e-12);
  /** Per item chosen, in order: the similarity of any candidate to it. */
  const toChosen: ((b: Candidate) => number)[] = [];
  const maxSim = new Float64Array(pool.length);
  /** How many of the chosen items candidate k has been compared with. */
  const compared = new Int32Array(pool.length);
  /** 1 chosen, 2 left out (its category was full when it led). */
  const taken = new Uint8Array(pool.length);
  const chosen: number[] = [];
  const out: Served[] = [];
  const perCategory = cap === undefined ? undefined : categoryCounts(cap);
  while (out.length < depth) {
    let bestK = -1;
    let bestV = -Infinity;
    for (let k = 0; k < pool.length; k++) {
      if (taken[k]) continue;
      const v = (1 - lambda) * ((pool[k] as Served).score / max) - lambda * (maxSim[k] as number);
      if (v > bestV) {
        bestV = v;
        bestK = k;
      }
    }
    if (bestK < 0) break;
    if (perCategory?.full(pool[bestK] as Served)) {
      taken[bestK] = 2;
      continue;
    }
    if ((compared[bestK] as number) < chosen.length) {
      // Bring the leader up to date; it may fall behind another.
      const b = pool[bestK] as Served;
      for (let j = compared[bestK] as number; j < chosen.length; j++) {
        const sim = (toChosen[j] as (b: Candidate) => number)(b);
        if (sim > (maxSim[bestK] as number)) maxSim[bestK] = sim;
      }
      compared[bestK] = chosen.length;
      continue;
    }
    taken[bestK] = 1;
    chosen.push(bestK);
    const c = pool[bestK] as Served;
    perCategory?.add(c);
    toChosen.push(similarity(c));
    if (bestK !== out.length) c.explain.rerank.push({ control: 'diversity', moved_from: bestK + 1, moved_to: out.length + 1 });
    out.push(c);
  }
  // The candidates not picked, in score order, then the rest (within the cap, counting those picked).
  const after = [...pool.filter((_, k) => !taken[k]), ...rest];
  return [...out, ...(cap === undefined ? after : withinCategoryCap(after, cap, out))];
}
