import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../shared/random.ts';
import { HashingEmbedding } from '../../shared/search/embedding.ts';
import { NO_FILTER, SearchIndex, type SearchDoc } from '../../shared/search/engine.ts';
import { PreparedDelta, rank, strongestKeywordMatches } from '../../shared/search/rank.ts';
import { searchDoc } from '../helpers/fixtures.ts';
import { kthLargest } from '../../shared/top-k.ts';

/** The k-th largest score over `keys`, by sorting all of them. */
function exact(scores: Float32Array, keys: Int32Array, k: number): number {
  return [...keys].map((key) => scores[key] as number).sort((a, b) => b - a)[k - 1] as number;
}

/** Checks the answer: the exact threshold, and every key reaching it kept, in the matches' order. */
function check(scores: Float32Array, keys: Int32Array, k: number): number {
  const { keys: kept, threshold } = strongestKeywordMatches(scores, keys, k);
  expect(threshold).toBe(exact(scores, keys, k));
  const reaching = [...keys].filter((key) => (scores[key] as number) >= threshold);
  const keptList = [...kept];
  expect(keptList.filter((key) => (scores[key] as number) >= threshold)).toEqual(reaching);
  // Kept keys are matches, in their order.
  const at = new Map([...keys].map((key, j) => [key, j]));
  for (let j = 1; j < keptList.length; j++) expect(at.get(keptList[j] as number)).toBeGreaterThan(at.get(keptList[j - 1] as number) as number);
  return keptList.length;
}

describe("hybrid's head threshold over many keyword matches", () => {
  const n = 60_000;
  const keys = Int32Array.from({ length: n }, (_, j) => n - 1 - j);

  it('is exact and keeps a few times k of 60,000 random scores', () => {
    const r = seededRandom(5);
    const scores = Float32Array.from({ length: n }, () => r() * 10);
    expect(check(scores, keys, 500)).toBeLessThan(5000);
  });

  it('is exact when most scores tie', () => {
    const r = seededRandom(6);
    const scores = Float32Array.from({ length: n }, () => (r() < 0.99 ? 1 : 2 + r()));
    check(scores, keys, 500);
    check(new Float32Array(n).fill(3), keys, 500);
  });

  it('is exact when the evenly spaced sample overrates the matches (it falls back to all of them)', () => {
    // The sampled positions (every n / 2048-th match) score highest, the rest lower.
    const r = seededRandom(7);
    const scores = Float32Array.from({ length: n }, () => r() * 1000);
    const step = n / 2048;
    for (let j = 0; j < 2048; j++) scores[keys[Math.floor(j * step)] as number] = 1000 + j;
    expect(check(scores, keys, 500)).toBe(n);
  });

  it('searches the matches the caller listed at or above a floor, when at least k are', () => {
    const r = seededRandom(9);
    const scores = Float32Array.from({ length: n }, () => r() * 10);
    // As ranking lists them while accepting matches: at or above a floor, in the matches' order.
    const above = keys.filter((key) => (scores[key] as number) >= 9.9);
    expect(above.length).toBeGreaterThan(500);
    const { keys: kept, threshold } = strongestKeywordMatches(scores, keys, 500, above);
    expect(kept).toBe(above);
    expect(threshold).toBe(exact(scores, keys, 500));
  });

  it('is exact when the listed matches are fewer than k (it samples the matches itself)', () => {
    const r = seededRandom(10);
    const scores = Float32Array.from({ length: n }, () => r() * 10);
    const above = keys.filter((key) => (scores[key] as number) >= 9.99);
    expect(above.length).toBeLessThan(500);
    const { keys: kept, threshold } = strongestKeywordMatches(scores, keys, 500, above);
    expect(threshold).toBe(exact(scores, keys, 500));
    expect([...kept].filter((key) => (scores[key] as number) >= threshold).length).toBeGreaterThanOrEqual(500);
  });

  it('agrees with a quickselect over every match on a small list (no sampling)', () => {
    const r = seededRandom(8);
    const few = Int32Array.from({ length: 3000 }, (_, j) => j * 2);
    const scores = Float32Array.from({ length: 6000 }, () => r());
    const { keys: kept, threshold } = strongestKeywordMatches(scores, few, 500);
    expect(threshold).toBe(
      kthLargest(
        Float64Array.from(few, (key) => scores[key] as number),
        500,
      ),
    );
    expect([...kept]).toEqual([...few]);
  });
});

const emb = new HashingEmbedding(64);
const doc = (id: number, name: string, over: Partial<SearchDoc> = {}): SearchDoc => searchDoc((t) => emb.embedOne(t), id, name, '', over);

describe("hybrid's head over more than 8 × 2048 keys scored (its floor sampled before the matches are accepted)", () => {
  // The strongest keyword matches (short names) are inactive or filtered out; 17,000 keys touched.
  const docs = Array.from({ length: 17_000 }, (_, i) => (i < 1_000 ? doc(i + 1, 'widget', { active: i % 2 === 0 }) : doc(i + 1, `widget alpha beta ${i}`)));
  const index = SearchIndex.build(docs, 64, 1);
  const delta = new PreparedDelta({ docs: [], masked: new Set() });
  const q = emb.embedOne('widget');
  const ranked = (filter = NO_FILTER) => rank(index, delta, { query: 'widget', mode: 'hybrid', filter, queryVector: q, profile: null }, { limit: 50 });

  it('never holds an inactive item', () => {
    const r = ranked();
    expect(r.total).toBe(16_000 + 500);
    for (const h of r.hits) expect(h.doc.active, `${h.doc.id}`).toBe(true);
  });

  it('never holds a filtered-out item', () => {
    const r = ranked((d) => d.id > 1_000);
    expect(r.total).toBe(16_000);
    for (const h of r.hits) expect(h.doc.id).toBeGreaterThan(1_000);
  });
});
