import { describe, expect, it } from 'vitest';
import { BlendModel, easeFromGram, headGram, headItems, trainIals } from '../../shared/recs/blend.ts';
import { personalCandidates } from '../../shared/recs/candidates.ts';
import { Dataset, type Interaction } from '../../shared/recs/dataset.ts';
import { requestHistory } from '../../shared/recs/history.ts';
import { ItemItemModel, type History, type Model } from '../../shared/recs/models.ts';
import type { ServedModel } from '../../shared/recs/served-model.ts';
import { scoreSimilar } from '../../shared/recs/similar.ts';
import type { Catalog } from '../../shared/domain/catalog.ts';
import type { ItemWithVector, RecentEvent } from '../../shared/domain/types.ts';

/*
 * Similar items for a user (item_id and user_id): the user's history weighs at most 0.3 of the
 * anchor item, and that holds in every part of a blend, not only in the weights the model reads.
 */

/** An item-item model from rows of (neighbour, weight) by item index. */
function itemItem(n: number, rows: Record<number, [number, number][]>): ItemItemModel {
  const off = new Uint32Array(n + 1);
  const nbr: number[] = [];
  const w: number[] = [];
  for (let i = 0; i < n; i++) {
    off[i] = nbr.length;
    for (const [j, v] of rows[i] ?? []) nbr.push(j), w.push(v);
  }
  off[n] = nbr.length;
  return new ItemItemModel('item_knn', n, off, Uint32Array.from(nbr), Float32Array.from(w));
}

const top = (s: Float32Array, k: number, skip: number[]) =>
  [...s.keys()]
    .filter((i) => !skip.includes(i))
    .sort((a, b) => (s[b] as number) - (s[a] as number) || a - b)
    .slice(0, k);

describe('scoreSimilar: the history moves each part at most its share of the anchor there', () => {
  // Items 0-9. The anchor 0's neighbours are 1-3 in part `knows`; part `blind` has no row for it.
  // The user's history: item 5 (neighbours 6-8 in both parts).
  const n = 10;
  const knows = itemItem(n, {
    0: [
      [1, 0.9],
      [2, 0.8],
      [3, 0.7],
    ],
    5: [
      [6, 0.9],
      [7, 0.9],
      [8, 0.9],
    ],
  });
  const blind = itemItem(n, {
    5: [
      [6, 1],
      [7, 1],
      [8, 1],
    ],
  });
  const anchor: History = { items: [0], weights: [1] };
  const withUser: History = { items: [0, 5], weights: [1, 0.3] };

  it('a part where the anchor has no neighbours adds nothing: the ranking is the other part tilted', () => {
    const blend = new BlendModel([blind, knows], [0.6, 0.4]);
    const s = scoreSimilar(blend, anchor, withUser, new Float32Array(n));
    // The anchor's neighbours first, then the user's (0.27 < 0.7: within 0.3 of the anchor's best).
    expect(top(s, 6, [0, 5])).toEqual([1, 2, 3, 6, 7, 8]);
    // Unbounded, the blind part's user's items (0.6 of the blend at its best) outrank every neighbour.
    expect(top(blend.score(withUser), 3, [0, 5])).toEqual([6, 7, 8]);
    // Alone, a model without neighbours for the anchor has no candidates.
    expect(Math.max(...scoreSimilar(blind, anchor, withUser, new Float32Array(n)))).toBe(0);
  });

  it("bounds the history by its share of the anchor's best score in that part, where the anchor is weak there", () => {
    const weak = itemItem(n, {
      0: [[1, 0.1]],
      5: [
        [6, 0.9],
        [7, 0.9],
      ],
    });
    const s = scoreSimilar(weak, anchor, withUser, new Float32Array(n));
    const a = weak.score(anchor);
    for (let i = 0; i < n; i++) expect(Math.abs((s[i] as number) - (a[i] as number))).toBeLessThanOrEqual(0.3 * 0.1 + 1e-7);
    expect(top(s, 3, [0, 5])).toEqual([1, 6, 7]);
  });

  it('scores exactly as the model where the history stays within its share (every part)', () => {
    const blend = new BlendModel([knows, knows], [0.5, 0.5]);
    expect(scoreSimilar(knows, anchor, withUser, new Float32Array(n))).toEqual(knows.score(withUser));
    expect(scoreSimilar(blend, anchor, withUser, new Float32Array(n))).toEqual(blend.score(withUser));
    // The anchor's scores alone, when asked for: as the model scores it.
    for (const m of [knows, blend, new BlendModel([blind, knows], [0.6, 0.4])]) {
      const alone = new Float32Array(n).fill(7);
      scoreSimilar(m, anchor, withUser, new Float32Array(n), alone);
      expect(alone).toEqual(m.score(anchor));
    }
  });
});

// Two tastes: items 1-10 and 11-20, 15 users each taking 6 of them. Item 50 is taken by three
// users of the first taste only: too few interactions for EASE's head of 20 items (auto's EASE
// sees only its popular items), known to iALS.
const interactions: Interaction[] = [];
for (let u = 0; u < 30; u++) {
  const base = u % 2 === 0 ? 1 : 11;
  for (let k = 0; k < 6; k++) interactions.push({ user: `u${u}`, item: base + ((u + k) % 10), weight: 1, at: 0 });
  if (u < 6 && u % 2 === 0) interactions.push({ user: `u${u}`, item: 50, weight: 1, at: 0 });
}
const ds = new Dataset(interactions);

async function servedBlend(): Promise<ServedModel> {
  const head = headItems(ds, 20);
  const ease = easeFromGram(ds, head, headGram(ds, head), 10);
  const ials = await trainIals(ds, { factors: 8, alpha0: 0.1, lambda: 0.01, cgSteps: 3, epochs: 10 });
  const model: Model = new BlendModel([ease, ials], [0.5, 0.5], 'ease+ials');
  return { model, items: ds.items, popularity: Float32Array.from(ds.itemWeight), itemIndex: new Map(ds.items.map((id, i) => [id, i])), popular: new Map() };
}

/** A catalog of the dataset's items (and `extra` ones, unknown to its models), with 2-dimensional vectors for those in `vectors`. */
function catalogOf(vectors: Map<number, [number, number]> = new Map(), extra: number[] = []): Catalog {
  const docs = new Map(
    [...ds.items, ...extra].map((id) => [id, { id, active: true, metadata: {}, vector: vectors.has(id) ? Float32Array.from(vectors.get(id) as [number, number]) : null } as unknown as ItemWithVector]),
  );
  return {
    dims: 2,
    behind: false,
    current: async (ids) => ids.map((id) => docs.get(id)),
    get: (id) => docs.get(id),
    isLive: (id) => docs.has(id),
    newest: () => [],
    similarity: () => () => 0,
    hasVector: (d) => d.vector !== null,
    addVectors(items, weights, into) {
      let any = false;
      items.forEach((d, j) => {
        if (!d.vector) return;
        for (let x = 0; x < 2; x++) into[x] = (into[x] as number) + (weights[j] as number) * (d.vector[x] as number);
        any = true;
      });
      return any;
    },
    nearest(q, k, visit) {
      const cosine = (v: Float32Array) => ((q[0] as number) * (v[0] as number) + (q[1] as number) * (v[1] as number)) / Math.hypot(v[0] as number, v[1] as number);
      const scored = [...docs.values()].flatMap((d) => (d.vector ? [[d.id, cosine(d.vector)] as const] : []));
      for (const [id, c] of scored.sort((a, b) => b[1] - a[1]).slice(0, k)) visit(id, c);
    },
  };
}

/** The best `k` candidates (item ids) for the anchor and the user's recent views, left out the anchor and what the user saw. */
function similarFor(model: ServedModel | undefined, catalog: Catalog, anchorId: number | undefined, seen: number[], k = 5): number[] {
  const recent: RecentEvent[] = seen.map((item, j) => ({ id: j + 1, item_id: String(item), type: 'view', created: 0 }));
  const h = requestHistory({ catalog, model, anchorId, userId: 'b', recent, historyErased: false, weightOf: () => 1 });
  const out: [number, number][] = [];
  personalCandidates(catalog, model, h, false).forEach((score, id) => {
    if (id !== anchorId && !seen.includes(id)) out.push([id, score]);
  });
  return out
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k)
    .map(([id]) => id);
}

describe("similar items for a user: the request's history", () => {
  it("weighs the user's whole history at most 0.3 of the anchor, and each event at most that share (a lighter history is not scaled up)", () => {
    const catalog = catalogOf();
    const view = (item: number, id: number): RecentEvent => ({ id, item_id: String(item), type: 'view', created: 0 });
    const heavy = requestHistory({ catalog, model: undefined, anchorId: 3, userId: 'b', recent: [view(11, 2), view(13, 1)], historyErased: false, weightOf: () => 1 });
    expect(heavy.weights[0]).toBe(1);
    expect((heavy.weights[1] as number) + (heavy.weights[2] as number)).toBeCloseTo(0.3, 12);
    const light = requestHistory({ catalog, model: undefined, anchorId: 3, userId: 'b', recent: [view(11, 1)], historyErased: false, weightOf: () => 0.5 });
    expect(light.weights).toEqual([1, expect.closeTo(0.15, 12)]);
  });
});

describe("similar items for a user, through the request's history and candidates", () => {
  const firstTaste = (ids: number[]) => ids.filter((id) => id >= 1 && id <= 10).length;

  it("an anchor outside EASE's head in auto's blend: its neighbours (first taste), not the user's own taste", async () => {
    const model = await servedBlend();
    const catalog = catalogOf();
    // The user saw five items of the second taste.
    const user = [11, 13, 15, 17, 19];
    const alone = similarFor(model, catalog, 50, []);
    const tilted = similarFor(model, catalog, 50, user);
    // The anchor's strongest neighbours lead, tilted or not; the user's taste moves the rest.
    expect(tilted.slice(0, 2), JSON.stringify(tilted)).toEqual(alone.slice(0, 2));
    expect(firstTaste(tilted), JSON.stringify(tilted)).toBeGreaterThanOrEqual(3);
  });

  it('plain item_id and plain user_id requests score by the model as it scores their history, unbounded', async () => {
    const model = await servedBlend();
    const catalog = catalogOf();
    for (const [anchorId, seen] of [
      [50, []],
      [3, []],
      [undefined, [11, 13, 15, 17, 19]],
      [undefined, [1, 50]],
    ] as const) {
      const recent: RecentEvent[] = seen.map((item, j) => ({ id: j + 1, item_id: String(item), type: 'view', created: 0 }));
      const h = requestHistory({ catalog, model, anchorId, userId: 'b', recent, historyErased: false, weightOf: () => 1 });
      const s = model.model.score({ items: h.modelItems, weights: h.modelWeights });
      const max = Math.max(...s);
      const expected = new Map([...s.keys()].filter((i) => (s[i] as number) > 0).map((i) => [ds.items[i] as number, (s[i] as number) / max]));
      const got = new Map<number, number>();
      personalCandidates(catalog, model, h, true).forEach((score, id) => got.set(id, score));
      expect(got).toEqual(expected);
    }
  });

  it("an anchor with one neighbour (item-kNN): its content neighbours next, not the user's own recommendations the bounded tilt brought", () => {
    // Item-kNN by model index: the anchor 50 co-occurs with item 1 alone; the user's items (second
    // taste) with the rest of the second taste. Vectors: the first taste and 50 alike, the second apart.
    const at = (id: number) => ds.itemIndex.get(id) as number;
    const second = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
    const rows: Record<number, [number, number][]> = { [at(50)]: [[at(1), 0.5]] };
    for (const u of [11, 13]) rows[at(u)] = second.filter((x) => x !== u).map((x) => [at(x), 0.8]);
    const knn = itemItem(ds.items.length, rows);
    const model: ServedModel = { model: knn, items: ds.items, popularity: Float32Array.from(ds.itemWeight), itemIndex: new Map(ds.items.map((id, i) => [id, i])), popular: new Map() };
    const vectors = new Map<number, [number, number]>(ds.items.map((id) => [id, id <= 10 || id === 50 ? [1, 0.1] : [0.1, 1]]));
    const catalog = catalogOf(vectors);
    const alone = similarFor(model, catalog, 50, []);
    expect(firstTaste(alone), JSON.stringify(alone)).toBe(5);
    // The user's history tilts; the items it alone brought (the second taste, at most 0.3 of the
    // neighbour's score) do not push the anchor's neighbours by content below them.
    const tilted = similarFor(model, catalog, 50, [11, 13]);
    expect(tilted[0]).toBe(1);
    expect(firstTaste(tilted), JSON.stringify(tilted)).toBe(5);
    // The neighbour seen by the user: still the anchor's neighbours by content, not the user's own list.
    const seenNeighbour = similarFor(model, catalog, 50, [1, 11, 13]);
    expect(firstTaste(seenNeighbour), JSON.stringify(seenNeighbour)).toBe(5);
  });

  it("an anchor without a vector (not embedded yet) the model never saw: no content neighbours from the user's taste alone", () => {
    // No model: content is the whole score. The anchor 50 has no vector; the user's items do.
    const vectors = new Map<number, [number, number]>(ds.items.filter((id) => id !== 50).map((id) => [id, id <= 10 ? [1, 0.1] : [0.1, 1]]));
    const catalog = catalogOf(vectors);
    expect(similarFor(undefined, catalog, 50, [11, 13])).toEqual([]);
    // With a vector, its neighbours by content.
    vectors.set(50, [1, 0]);
    const withVector = similarFor(undefined, catalogOf(vectors), 50, [11, 13]);
    expect(firstTaste(withVector), JSON.stringify(withVector)).toBe(5);
  });
});

describe("personal candidates: the model's best, then content for what it does not rank", () => {
  const at = (id: number) => ds.itemIndex.get(id) as number;
  const served = (model: Model, items: readonly number[] = ds.items): ServedModel => ({
    model,
    items: [...items],
    popularity: new Float32Array(items.length),
    itemIndex: new Map(items.map((id, i) => [id, i])),
    popular: new Map(),
  });
  const scoresFor = (model: ServedModel, catalog: Catalog, seen: number[]) => {
    const recent: RecentEvent[] = seen.map((item, j) => ({ id: j + 1, item_id: String(item), type: 'view', created: 0 }));
    const h = requestHistory({ catalog, model, anchorId: undefined, userId: 'b', recent, historyErased: false, weightOf: () => 1 });
    const got = new Map<number, number>();
    personalCandidates(catalog, model, h, true).forEach((score, id) => got.set(id, score));
    return got;
  };

  it("scores the model's candidates on its 0-1 scale alone; content adds items it never saw (by cosine), and items it knows but does not rank at half its lowest candidate's score; never an item content finds unlike the taste", () => {
    // The user's item 1: the model's neighbours 2 (0.8) and 3 (0.4), scaled to 1 and 0.5.
    const model = served(
      itemItem(ds.items.length, {
        [at(1)]: [
          [at(2), 0.8],
          [at(3), 0.4],
        ],
      }),
    );
    // Item 99 is new since training. Item 5 points away from the taste (a negative cosine).
    const vectors = new Map<number, [number, number]>([
      [1, [1, 0]],
      [2, [1, 0]],
      [4, [1, 1]],
      [5, [-1, 0.2]],
      [99, [0.6, 0.8]],
    ]);
    const got = scoresFor(model, catalogOf(vectors, [99]), [1]);
    const expected = new Map([
      [2, 1],
      [3, 0.5],
      [1, 0.25],
      [4, 0.25 * Math.SQRT1_2],
      [99, 0.6],
    ]);
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([...expected.keys()].sort((a, b) => a - b));
    for (const [id, score] of expected) expect(got.get(id), `item ${id}`).toBeCloseTo(score, 6);
  });

  it('gives items the model knows 0.15 of their cosine when it has no candidate for the history', () => {
    // The user's item 1 has no neighbours in the model.
    const model = served(itemItem(ds.items.length, { [at(2)]: [[at(3), 0.8]] }));
    const vectors = new Map<number, [number, number]>([
      [1, [1, 0]],
      [4, [1, 1]],
      [99, [0.6, 0.8]],
    ]);
    const got = scoresFor(model, catalogOf(vectors, [99]), [1]);
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([1, 4, 99]);
    expect(got.get(1)).toBeCloseTo(0.15, 6);
    expect(got.get(4)).toBeCloseTo(0.15 * Math.SQRT1_2, 6);
    expect(got.get(99)).toBeCloseTo(0.6, 6);
  });

  it("keeps 500 of the model's candidates besides the history's own items, however long the history (they are left out later unless include_seen)", () => {
    // 600 items; the history's items 0-9 each rank every other item, the lower the index the higher.
    const n = 600;
    const rows: Record<number, [number, number][]> = {};
    for (let i = 0; i < 10; i++) rows[i] = Array.from({ length: n }, (_, j): [number, number] => [j, (n - j) / n]).filter(([j]) => j !== i);
    const items = Array.from({ length: n }, (_, i) => 1000 + i);
    const model = served(itemItem(n, rows), items);
    const catalog: Catalog = { ...catalogOf(), addVectors: () => false };
    const history = Array.from({ length: 10 }, (_, i) => i);
    const h = { modelItems: history, modelWeights: history.map(() => 1), docs: [], weights: [], anchored: false, isSeen: (id: number) => id < 1010 };
    for (const [includeSeen, want] of [
      [false, 510],
      [true, 500],
    ] as const) {
      const ids: number[] = [];
      personalCandidates(catalog, model, h, includeSeen).forEach((_, id) => ids.push(id));
      expect(ids.length, `include_seen ${includeSeen}`).toBe(want);
      if (!includeSeen) expect(ids.filter((id) => !h.isSeen(id)).length).toBe(500);
    }
  });
});
