import { describe, expect, it } from 'vitest';
import { foldInUsers, historiesOf, historyOf, holdsAnyOf, packModel, unpackModel, unpackModelInTurns, unreadItemsOf, unreadOf, withoutUsers, type ModelArtifact } from '../../shared/recs/artifact.ts';
import { F32Rows } from '../../shared/recs/f32-rows.ts';
import { turnsDuring } from '../helpers/fixtures.ts';
import { ANCHORS_KEPT, AlsModel, BlendModel, DenseHeadModel, easeFromGram, headGram, headItems, offDiagonalShare, trainEaseDense, trainIals } from '../../shared/recs/blend.ts';
import { Dataset, type Interaction } from '../../shared/recs/dataset.ts';
import { ItemItemModel, type History, type Model } from '../../shared/recs/models.ts';
import { ALS_DEFAULTS, BLEND_WEIGHTS, EASE_LAMBDAS, SESSION_WEIGHTINGS, canonical, interactionsOf, trainDefault, validationSplit, type CurvePoint } from '../../shared/recs/tuning.ts';
import { packSections } from '../../shared/sections.ts';
import { seededRandom } from '../../shared/random.ts';

/*
 * The default algorithm (shared/recs/tuning.ts) and its models' artifacts: what is served must
 * score exactly as what was trained, and a run chooses on a split of its own training data.
 */

/**
 * Synthetic training interactions: three tastes of 12 items each and 4 items everyone may take,
 * 60 users with 6 to 12 interactions, most within their taste, popularity skewed within it.
 */
function synthetic(seed = 3): Interaction[] {
  const rand = seededRandom(seed);
  const out: Interaction[] = [];
  for (let u = 0; u < 60; u++) {
    const taste = u % 3;
    const n = 6 + Math.floor(rand() * 7);
    const mine = new Set<number>();
    while (mine.size < n) {
      const shared = rand() < 0.15;
      mine.add(shared ? 37 + Math.floor(rand() * 4) : 1 + taste * 12 + Math.floor(rand() ** 2 * 12));
    }
    for (const item of mine) out.push({ user: `u${u}`, item, weight: 1 + Math.floor(rand() * 3), at: 0 });
  }
  return out;
}

const roundTrip = (model: Model, ds: Dataset) =>
  unpackModel(packModel({ model, items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: historiesOf(ds, 5, ['view'], 9), typeWeights: new Map([['view', 2]]) }));
/** Every user's history, an empty one and one item alone. */
const histories = (ds: Dataset): History[] => [...ds.users.map((_, u) => ds.row(u)), { items: [], weights: [] }, { items: [3], weights: [2.5] }];

describe('loading a model artifact', () => {
  it("copies its sections a few MB at a time, its factors and EASE's head straight into the kernels' memory, the thread's other work served between: the same model", async () => {
    // 20,000 items × 128 factors (10 MB) and a head of 1,600 (10 MB): more than a step each.
    const n = 20_000;
    const rand = seededRandom(5);
    const values = (length: number) => Float32Array.from({ length }, () => rand() - 0.5);
    const als = new AlsModel(n, 128, values(n * 128), new Float64Array(128 * 128).fill(0.01), 0.1, 0.01);
    const ease = new DenseHeadModel(
      'ease',
      n,
      Uint32Array.from({ length: 1600 }, (_, i) => i * 12),
      values(1600 * 1600),
    );
    const blend = new BlendModel([ease, als], [0.4, 0.6], 'ease+ials');
    const bytes = packModel({ model: blend, items: Array.from({ length: n }, (_, i) => i + 1), popularity: values(n) });
    const { value: loaded, turns } = await turnsDuring(() => unpackModelInTurns(bytes));
    expect(turns).toBeGreaterThanOrEqual(4);
    const atOnce = unpackModel(bytes);
    for (const h of [
      { items: [0, 12, 24], weights: [1, 2, 1] },
      { items: [7, 19_999], weights: [3, 1] },
    ]) {
      const want = Array.from(blend.score(h));
      expect(Array.from(loaded.model.score(h))).toEqual(want);
      expect(Array.from(atOnce.model.score(h))).toEqual(want);
    }
  });

  it("fills a kernel's rows a few MB at a time (F32Rows.filling): the same rows as at once", () => {
    const src = Float32Array.from({ length: 3 * 2 ** 20 }, (_, i) => (i % 1000) / 7);
    const steps = F32Rows.filling(src, 3 * 2 ** 13, 128);
    let pauses = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) pauses += 1;
    // 12 MB: three copies of 4 MB, a pause between each two.
    expect(pauses).toBe(2);
    expect(Buffer.from(step.value.rows.buffer, step.value.rows.byteOffset, step.value.rows.byteLength).equals(Buffer.from(src.buffer))).toBe(true);
  });
});

describe('iALS serving', () => {
  it('keeps a single item folded in at weight 1 (an anchor), the same vector as folding it in again', async () => {
    const ds = new Dataset(synthetic());
    const als = await trainIals(ds, { ...ALS_DEFAULTS, factors: 16, epochs: 3 });
    let folds = 0;
    const fold = als.userVector.bind(als);
    als.userVector = (h: History) => {
      folds++;
      return fold(h);
    };
    const anchor: History = { items: [4], weights: [1] };
    const first = Array.from(als.score(anchor));
    expect(folds).toBe(1);
    expect(Array.from(als.score({ items: [4], weights: [1] }))).toEqual(first);
    expect(folds).toBe(1);
    expect(Array.from(als.vectorOf(anchor))).toEqual(Array.from(fold(anchor)));
    // Another weight, another item, or a longer history are folded in each time.
    als.score({ items: [4], weights: [2] });
    als.score({ items: [4], weights: [2] });
    als.score({ items: [4, 5], weights: [1, 1] });
    expect(folds).toBe(4);
    als.score({ items: [5], weights: [1] });
    als.score({ items: [5], weights: [1] });
    expect(folds).toBe(5);
  });

  it('keeps ANCHORS_KEPT anchors, the least recently used let go: an anchor asked for between as many others is folded in once', () => {
    // Two factors; QᵀQ the identity (any positive definite matrix solves).
    const items = ANCHORS_KEPT + 1;
    const q = Float32Array.from({ length: items * 2 }, (_, i) => ((i * 7) % 11) / 11);
    const als = new AlsModel(items, 2, q, Float64Array.from([1, 0, 0, 1]), 0.1, 0.5);
    const folded: number[] = [];
    const fold = als.userVector.bind(als);
    als.userVector = (h: History) => {
      folded.push(h.items[0] as number);
      return fold(h);
    };
    const foldsOf = (item: number) => folded.filter((i) => i === item).length;
    const busy = { items: [0], weights: [1] };
    const first = als.vectorOf(busy);
    for (let item = 1; item <= ANCHORS_KEPT; item++) {
      als.vectorOf({ items: [item], weights: [1] });
      expect(als.vectorOf(busy)).toBe(first);
    }
    expect(foldsOf(0)).toBe(1);
    // The bound holds: the latest other anchor is kept, the first was let go (folded in again).
    als.vectorOf({ items: [ANCHORS_KEPT], weights: [1] });
    als.vectorOf({ items: [1], weights: [1] });
    expect([foldsOf(ANCHORS_KEPT), foldsOf(1)]).toEqual([1, 2]);
  });

  it("folds a history in as training solves a user: α0·QᵀQ + Σ w·q·qᵀ + λ·(the history's length + α0·items) on the diagonal, against Σ w·q", () => {
    // Three items, two factors; a history of items 0 (weight 2) and 2 (weight 1).
    const q = Float32Array.from([1, 0, 0.5, 0.5, 0, 1]);
    const gram = new Float64Array(4);
    for (let i = 0; i < 3; i++) for (let x = 0; x < 2; x++) for (let y = 0; y < 2; y++) gram[x * 2 + y] = (gram[x * 2 + y] as number) + (q[i * 2 + x] as number) * (q[i * 2 + y] as number);
    const alpha0 = 0.1;
    const lambda = 0.5;
    const als = new AlsModel(3, 2, q, gram, alpha0, lambda);
    const items = [0, 2];
    const weights = [2, 1];
    const h: History = { items, weights };
    const reg = lambda * (2 + alpha0 * 3);
    const a = [0, 1, 2, 3].map((k) => alpha0 * (gram[k] as number));
    const b = [0, 0];
    items.forEach((item, t) => {
      const w = weights[t] as number;
      for (let x = 0; x < 2; x++) {
        b[x] = (b[x] as number) + w * (q[item * 2 + x] as number);
        for (let y = 0; y < 2; y++) a[x * 2 + y] = (a[x * 2 + y] as number) + w * (q[item * 2 + x] as number) * (q[item * 2 + y] as number);
      }
    });
    const [a00, a01, a10, a11] = [(a[0] as number) + reg, a[1] as number, a[2] as number, (a[3] as number) + reg];
    const det = a00 * a11 - a01 * a10;
    const expected = [(a11 * (b[0] as number) - a01 * (b[1] as number)) / det, (a00 * (b[1] as number) - a10 * (b[0] as number)) / det];
    const v = als.userVector(h);
    expect(v[0]).toBeCloseTo(expected[0] as number, 6);
    expect(v[1]).toBeCloseTo(expected[1] as number, 6);
  });
});

describe('artifacts of the default models: the loaded model scores exactly as the trained one', () => {
  const ds = new Dataset(synthetic());

  it('EASE with every weight, iALS and their blend', async () => {
    const ease = trainEaseDense(ds, { lambda: 50, maxItems: 30 });
    const als = await trainIals(ds, { ...ALS_DEFAULTS, factors: 16, epochs: 3 });
    const blend = new BlendModel([ease, als], [0.35, 0.65], 'ease+ials');
    for (const [model, kind] of [
      [ease, DenseHeadModel],
      [als, AlsModel],
      [blend, BlendModel],
    ] as const) {
      const back = roundTrip(model, ds);
      expect(back.model, model.algorithm).toBeInstanceOf(kind);
      expect(back.model.algorithm).toBe(model.algorithm);
      for (const h of histories(ds)) expect(Array.from(back.model.score(h)), model.algorithm).toEqual(Array.from(model.score(h)));
      // Scoring into a reused array gives the same.
      const into = new Float32Array(ds.items.length).fill(7);
      expect(Array.from(back.model.score(histories(ds)[0] as History, into))).toEqual(Array.from(model.score(histories(ds)[0] as History)));
      expect(back.items).toEqual(ds.items);
      expect(back.histories?.users).toEqual([...ds.users].sort());
      expect(back.typeWeights).toEqual(new Map([['view', 2]]));
    }
    // The blend's parts and weights come back as they were.
    const parts = roundTrip(blend, ds).model as BlendModel;
    expect(parts.weights).toEqual([0.35, 0.65]);
    expect(parts.parts.map((p) => p.constructor)).toEqual([DenseHeadModel, AlsModel]);
    // EASE's head: items outside it score 0.
    const head = new Set(Array.from(ease.head));
    const s = roundTrip(ease, ds).model.score(ds.row(0));
    for (let i = 0; i < ds.items.length; i++) if (!head.has(i)) expect(s[i]).toBe(0);
  });

  it("stores iALS's users folded in: a trained history's row scores from its stored vector as its fold-in does", async () => {
    const als = await trainIals(ds, { ...ALS_DEFAULTS, factors: 16, epochs: 3 });
    const blend = new BlendModel([trainEaseDense(ds, { lambda: 50, maxItems: 30 }), als], [0.35, 0.65], 'ease+ials');
    const h = historiesOf(ds, 5, ['view'], 9);
    await foldInUsers(blend, h);
    expect(als.userVectors?.length).toBe(h.users.length * 16);
    const back = unpackModel(packModel({ model: blend, items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: h }));
    const stored = (back.model as BlendModel).parts[1] as AlsModel;
    expect(Array.from(stored.userVectors ?? [])).toEqual(Array.from(als.userVectors ?? []));
    for (const user of h.users) {
      const row = historyOf(h, user) as History;
      expect(row.row).toBe(h.users.indexOf(user));
      // The stored vector (not folded in again: a view of the stored array) scores exactly as the fold-in.
      expect(stored.vectorOf(row).buffer).toBe(stored.userVectors?.buffer);
      expect(Array.from(stored.score(row))).toEqual(Array.from(stored.score({ items: row.items, weights: row.weights })));
    }
    // Without histories (or with other ones), no vectors are stored; a spec naming them needs them.
    const bare = unpackModel(packModel({ model: blend, items: ds.items, popularity: Float32Array.from(ds.itemWeight) }));
    expect(((bare.model as BlendModel).parts[1] as AlsModel).userVectors).toBeUndefined();
  });

  it("an erased user leaves an artifact: their history row and iALS vector go, every other user's stay as they were", async () => {
    const als = await trainIals(ds, { ...ALS_DEFAULTS, factors: 8, epochs: 2 });
    const blend = new BlendModel([trainEaseDense(ds, { lambda: 50, maxItems: 30 }), als], [0.35, 0.65], 'ease+ials');
    const h = historiesOf(ds, 5, ['view'], 9);
    await foldInUsers(blend, h);
    const bytes = packModel({ model: blend, items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: h });
    const gone = h.users[1] as string;
    const before = unpackModel(bytes);
    const after = withoutUsers(unpackModel(bytes), (u) => u === gone);
    if (!after?.histories) throw new Error('the user was in the artifact');
    // Stored and read back, as an erasure writes it.
    const back = unpackModel(packModel(after));
    const bh = back.histories as NonNullable<typeof back.histories>;
    expect(bh.users).toEqual(h.users.filter((u) => u !== gone));
    expect(historyOf(bh, gone)).toBeUndefined();
    const vectors = (m: ModelArtifact) => ((m.model as BlendModel).parts[1] as AlsModel).userVectors as Float32Array;
    expect(vectors(back).length).toBe(bh.users.length * 8);
    for (const user of bh.users) {
      const was = historyOf(before.histories as NonNullable<typeof before.histories>, user) as History;
      const is = historyOf(bh, user) as History;
      expect([Array.from(is.items), Array.from(is.weights)]).toEqual([Array.from(was.items), Array.from(was.weights)]);
      expect(Array.from(vectors(back).subarray((is.row as number) * 8, (is.row as number) * 8 + 8))).toEqual(
        Array.from(vectors(before).subarray((was.row as number) * 8, (was.row as number) * 8 + 8)),
      );
      expect(Array.from(back.model.score(is))).toEqual(Array.from(before.model.score(was)));
    }
    // Nobody of the artifact's: nothing to rewrite.
    expect(withoutUsers(unpackModel(bytes), (u) => u === 'nobody')).toBeUndefined();
  });

  it("carries users' events on items training did not read (stored and read back), and an erased user's leave with the rest of them", () => {
    const model = trainEaseDense(ds, { lambda: 50, maxItems: 30 });
    const known = ds.users[0] as string;
    // A trained user and one training saw only on items it did not read; an item id past 2^32.
    const unread = unreadItemsOf([
      { user: known, item: 900, weight: 2 },
      { user: 'only-unread', item: 2 ** 40, weight: 1 },
      { user: known, item: 900, weight: 5 },
      { user: known, item: 700, weight: 1 },
    ]);
    expect(unreadItemsOf([])).toBeUndefined();
    const h = { ...historiesOf(ds, 5, ['view'], 9), ...(unread ? { unread } : {}) };
    const bytes = packModel({ model, items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: h });
    const back = unpackModel(bytes).histories as NonNullable<ModelArtifact['histories']>;
    const of = (x: typeof back, user: string) => {
      const r = unreadOf(x, user);
      return r && [Array.from(r.items), Array.from(r.weights)];
    };
    expect(of(back, known)).toEqual([
      [700, 900],
      [1, 7],
    ]);
    expect(of(back, 'only-unread')).toEqual([[2 ** 40], [1]]);
    expect(of(back, ds.users[1] as string)).toBeUndefined();
    expect(historyOf(back, 'only-unread')).toBeUndefined();
    expect(holdsAnyOf(back, (u) => u === 'only-unread')).toBe(true);
    // Erased: a user known only by such events is taken out too, and the others' stay.
    const without = withoutUsers(unpackModel(bytes), (u) => u === 'only-unread');
    if (!without?.histories) throw new Error('the user was in the artifact');
    const after = unpackModel(packModel(without)).histories as NonNullable<ModelArtifact['histories']>;
    expect(of(after, 'only-unread')).toBeUndefined();
    expect(holdsAnyOf(after, (u) => u === 'only-unread')).toBe(false);
    expect(of(after, known)).toEqual(of(back, known));
    expect(after.users).toEqual(back.users);
    // A trained user leaves both.
    const both = withoutUsers(unpackModel(bytes), (u) => u === known)?.histories as NonNullable<ModelArtifact['histories']>;
    expect([historyOf(both, known), unreadOf(both, known)]).toEqual([undefined, undefined]);
    expect(of(both, 'only-unread')).toEqual([[2 ** 40], [1]]);
    // The last such user gone: none left, nothing stored for them.
    const none = withoutUsers(unpackModel(bytes), (u) => u === known || u === 'only-unread')?.histories;
    expect(none?.unread).toBeUndefined();
    expect(unpackModel(packModel({ model, items: ds.items, popularity: Float32Array.from(ds.itemWeight), histories: none as NonNullable<typeof none> })).histories?.unread).toBeUndefined();
  });

  it('an artifact written before model specs (an item-item model in the old layout) still loads', () => {
    const off = Uint32Array.from([0, 1, 2, 2]);
    const nbr = Uint32Array.from([1, 0]);
    const w = Float32Array.from([0.5, 0.25]);
    const bytes = packSections({ format: 'recsearch-model-v1', algorithm: 'ease', items: [10, 20, 30] }, [
      ['popularity', Float32Array.from([3, 2, 1])],
      ['off', off],
      ['nbr', nbr],
      ['w', w],
    ]);
    const back = unpackModel(bytes);
    expect(back.model).toBeInstanceOf(ItemItemModel);
    expect(Array.from(back.model.score({ items: [0], weights: [2] }))).toEqual([0, 1, 0]);
    expect(back.histories).toBeUndefined();
  });

  it('refuses a spec it does not know', () => {
    const bytes = packSections({ format: 'recsearch-model-v1', algorithm: 'x', items: [1], model: { kind: 'magic' } }, [['popularity', Float32Array.from([1])]]);
    expect(() => unpackModel(bytes)).toThrow();
  });
});

describe('trainDefault: chooses on a validation split of its own training data, then refits on all of it', () => {
  const train = synthetic();
  const ds = new Dataset(train);

  it("holds out a fifth of each item's interactions (or of each user's), only from the training data", () => {
    const given = new Set(train);
    for (const by of ['item', 'user'] as const) {
      const { train: kept, held } = validationSplit(train, 4321, by);
      expect(kept.length + held.length, by).toBe(train.length);
      expect(held.length, by).toBeGreaterThan(train.length * 0.1);
      expect(held.length, by).toBeLessThan(train.length * 0.3);
      for (const x of held) expect(given.has(x)).toBe(true);
    }
    // Per item: round(0.8 n) of each item's n train, so an item with one or two is never held out.
    const { held } = validationSplit([...train, { user: 'a', item: 99, weight: 1, at: 0 }, { user: 'b', item: 98, weight: 1, at: 0 }, { user: 'c', item: 98, weight: 1, at: 0 }]);
    expect(held.filter((x) => x.item >= 98)).toEqual([]);
    const count = (xs: Interaction[], item: number) => xs.filter((x) => x.item === item).length;
    for (const item of new Set(train.map((x) => x.item))) expect(count(held, item), `item ${item}`).toBe(count(train, item) - Math.round(count(train, item) * 0.8));
  });

  it('keeps the best point of each stage, says so in its record, and refits what it chose on every interaction', async () => {
    const points: CurvePoint[] = [];
    const fractions: number[] = [];
    const messages: string[] = [];
    const r = await trainDefault(ds, { progress: (f, m) => (fractions.push(f), m && messages.push(m)) }, (p) => points.push(p), { maxItems: 30 });
    const v = r.validation;
    // Every point was reported as it came, in the curve's order: 4 λ, 12 epochs, 11 weights.
    expect(points).toEqual(v.curve);
    expect(v.curve.map((p) => p.stage)).toEqual([...EASE_LAMBDAS.map(() => 'ease'), ...Array.from({ length: 12 }, () => 'ials'), ...BLEND_WEIGHTS.map(() => 'blend')]);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(messages.join('\n')).toMatch(/chosen: EASE λ \d+, iALS \d+ epochs/);
    // The choices are the best points on validation (the first of equals): EASE's λ alone, then
    // iALS's epochs and the weight together, by the blend's best at each epoch.
    const best = (stage: CurvePoint['stage'], by: (p: CurvePoint) => number = (p) => p.ndcg_at_10) => v.curve.filter((p) => p.stage === stage).reduce((a, b) => (by(b) > by(a) ? b : a));
    expect(v.chosen.ease_lambda).toBe(best('ease').value);
    const epoch = best('ials', (p) => p.blend_ndcg_at_10 ?? -1);
    expect(v.chosen.ials_epochs).toBe(epoch.value);
    expect(v.chosen.ials_weight).toBe(best('blend').value);
    expect(v.chosen.ials_weight).toBe(epoch.blend_weight);
    expect(v.ndcg_at_10).toBe(best('blend').ndcg_at_10);
    expect(v.ndcg_at_10).toBe(epoch.blend_ndcg_at_10);
    // Blending does not lose to iALS alone at the epoch kept (weight 1 is on the curve).
    expect(v.ndcg_at_10).toBeGreaterThanOrEqual(epoch.ndcg_at_10);
    expect(v.ndcg_at_10).toBeGreaterThan(0);
    expect(v.users).toBeGreaterThan(0);
    expect(v.held_out).toBe(validationSplit(train).held.length);
    // The blend's own weights are the ends of its curve: weight 0 is EASE alone, 1 iALS alone.
    expect(v.curve.find((p) => p.stage === 'blend' && p.value === 0)?.ndcg_at_10).toBe(best('ease').ndcg_at_10);

    // The model is what was chosen, fitted on every training interaction (not the validation part).
    const all = canonical(ds);
    const head = headItems(all, 30);
    const ease = easeFromGram(all, head, headGram(all, head), v.chosen.ease_lambda);
    const als = await trainIals(all, { ...ALS_DEFAULTS, epochs: v.chosen.ials_epochs });
    const w = v.chosen.ials_weight;
    const expected = w === 0 ? ease : w === 1 ? als : new BlendModel([ease, als], [1 - w, w]);
    for (const h of histories(ds)) expect(Array.from(r.model.score(h))).toEqual(Array.from(expected.score(h)));
  });

  it('chooses and fits the same whatever order the interactions come in (as the trainer reads them from shards)', async () => {
    const shuffled = [...train];
    const rand = seededRandom(99);
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j] as Interaction, shuffled[i] as Interaction];
    }
    // The same items in the same index order: only users' and interactions' order differ.
    const other = new Dataset(shuffled, ds.items);
    expect(other.users).not.toEqual(ds.users);
    const [a, b] = await Promise.all([trainDefault(ds, {}, undefined, { maxItems: 30 }), trainDefault(other, {}, undefined, { maxItems: 30 })]);
    expect(b.validation).toEqual(a.validation);
    for (const user of ds.users) {
      const h = ds.row(ds.userIndex.get(user) as number);
      expect(Array.from(b.model.score(h)), user).toEqual(Array.from(a.model.score(h)));
    }
  });

  it('stops when asked, between its steps', async () => {
    let calls = 0;
    await expect(trainDefault(ds, { shouldStop: () => ++calls > 3 }, undefined, { maxItems: 30 })).rejects.toThrow('stopped');
  });
});

describe("EASE's head (headItems)", () => {
  it('holds the items with most interactions, ties by lower index, and never an item without any (a catalog item no one took)', () => {
    const x = (user: string, item: number): Interaction => ({ user, item, weight: 1, at: 0 });
    // Items 5 and 6 in the universe only; 1 taken three times, 2, 3 and 4 twice each.
    const ds = new Dataset([x('a', 1), x('b', 1), x('c', 1), x('a', 4), x('b', 4), x('a', 3), x('c', 3), x('b', 2), x('c', 2)], [5, 4, 3, 2, 1, 6]);
    const ids = (head: Uint32Array) => Array.from(head, (i) => ds.items[i]);
    expect(ids(headItems(ds, 10))).toEqual([1, 4, 3, 2]);
    // A cut among equals keeps the lower indexes (the universe's order: 4 before 3 before 2).
    expect(ids(headItems(ds, 3))).toEqual([1, 4, 3]);
  });
});

describe('co-occurrence weighted by time (sessions)', () => {
  const at = (user: string, item: number, t: number): Interaction => ({ user, item, weight: 1, at: t });
  const DAY = 86_400;

  it('counts a pair 1 within the same moment and towards the floor as they drift apart; an item with itself stays its count', () => {
    const ds = new Dataset([at('a', 1, 0), at('a', 2, 0), at('a', 3, DAY), at('b', 1, 5000), at('b', 3, 5300)], [1, 2, 3]);
    const head = Uint32Array.from([0, 1, 2]);
    const plain = headGram(ds, head);
    expect(Array.from(plain)).toEqual([2, 1, 2, 1, 1, 1, 2, 1, 2]);
    const session = { seconds: 300, floor: 0.1 };
    const g = headGram(ds, head, session);
    const w = (dt: number) => 0.1 + 0.9 * Math.exp(-dt / 300);
    expect(g[0]).toBe(2);
    expect(g[4]).toBe(1);
    expect(g[8]).toBe(2);
    expect(g[1]).toBe(1);
    expect(g[3]).toBe(1);
    expect(g[2]).toBeCloseTo(w(DAY) + w(300), 12);
    expect(g[6]).toBe(g[2]);
    expect(g[5]).toBeCloseTo(w(DAY), 12);
    // Unknown times (events sent without one) count 1 whatever the other side's time.
    const unknown = new Dataset([at('a', 1, Number.NaN), at('a', 2, 0), at('a', 3, DAY)], [1, 2, 3]);
    const gu = headGram(unknown, head, session);
    expect([gu[1], gu[2], gu[3], gu[6]]).toEqual([1, 1, 1, 1]);
    expect(gu[5]).toBeCloseTo(w(DAY), 12);
    // Without timestamps (every interaction at the same moment) nothing changes.
    const flat = new Dataset([at('a', 1, 7), at('a', 2, 7), at('a', 3, 7)], [1, 2, 3]);
    expect(Array.from(headGram(flat, head, session))).toEqual(Array.from(headGram(flat, head)));
  });

  it("measures the share of the pairs' mass a weighting keeps; without any pair (no user took two head items) the weighting changed nothing: 1", () => {
    const ds = new Dataset([at('a', 1, 0), at('a', 2, DAY), at('b', 1, 0), at('b', 2, 0)], [1, 2]);
    const head = Uint32Array.from([0, 1]);
    const w = (dt: number) => 0.1 + 0.9 * Math.exp(-dt / 300);
    expect(offDiagonalShare(headGram(ds, head, { seconds: 300, floor: 0.1 }), headGram(ds, head), 2)).toBeCloseTo((1 + w(DAY)) / 2, 12);
    const alone = new Dataset([at('a', 1, 0), at('b', 2, DAY)], [1, 2]);
    expect(offDiagonalShare(headGram(alone, head, { seconds: 300, floor: 0.1 }), headGram(alone, head), 2)).toBe(1);
  });

  it("sums a repeated interaction's weights; an item's count is of users who took it, its weight the sum of theirs", () => {
    const ds = new Dataset([
      { user: 'a', item: 1, weight: 2, at: 10 },
      { user: 'a', item: 1, weight: 3, at: 50 },
      { user: 'b', item: 1, weight: 5, at: 0 },
      { user: 'a', item: 2, weight: 1, at: 20 },
    ]);
    expect(Array.from(ds.row(0).weights)).toEqual([5, 1]);
    const one = ds.itemIndex.get(1) as number;
    expect(ds.itemWeight[one]).toBe(10);
    expect(ds.itemCount[one]).toBe(2);
    expect(ds.nnz).toBe(3);
  });

  it('keeps the latest time of a repeated interaction, and carries times through a split', () => {
    const ds = new Dataset([at('a', 1, 10), at('a', 1, 50), at('a', 2, 20)], [1, 2]);
    expect(Array.from(ds.row(0).times)).toEqual([50, 20]);
    expect(interactionsOf(ds).map((x) => x.at)).toEqual([50, 20]);
    expect(interactionsOf(canonical(ds)).map((x) => x.at)).toEqual([50, 20]);
  });

  /**
   * Users who come twice, a week apart, each time for 4 items of one of four groups: within a
   * sitting the items go together, across sittings they do not.
   */
  function sessions(): Interaction[] {
    const rand = seededRandom(11);
    const out: Interaction[] = [];
    for (let u = 0; u < 200; u++) {
      for (const t of [0, 7 * DAY]) {
        const group = Math.floor(rand() * 4);
        const mine = new Set<number>();
        while (mine.size < 4) mine.add(1 + group * 10 + Math.floor(rand() * 10));
        [...mine].forEach((item, k) => out.push(at(`u${u}`, item, t + 60 * k)));
      }
    }
    return out;
  }

  it('is tried where time spreads the interactions, chosen on validation like λ, and the refit uses what was chosen', async () => {
    const ds = new Dataset(sessions());
    const r = await trainDefault(ds, {}, undefined, { maxItems: 40 });
    const v = r.validation;
    const ease = v.curve.filter((p) => p.stage === 'ease');
    // Every weighting at every λ, plain first.
    expect(ease.map((p) => [p.session?.seconds ?? null, p.value])).toEqual([null, ...SESSION_WEIGHTINGS.map((w) => w.seconds)].flatMap((s) => EASE_LAMBDAS.map((l) => [s, l])));
    const bestOf = (ps: CurvePoint[]) => ps.reduce((a, b) => (b.ndcg_at_10 > a.ndcg_at_10 ? b : a));
    const plain = bestOf(ease.filter((p) => !p.session));
    const timed = bestOf(ease.filter((p) => p.session));
    // The best weighting is kept only if its per-user gain over the best plain EASE is at least
    // twice its standard error; the check is in the record either way.
    const check = v.session_check;
    expect(check).not.toBeNull();
    expect(check?.kept).toBe((check?.gain as number) > (check?.two_se as number));
    expect(check?.gain).toBeCloseTo(timed.ndcg_at_10 - plain.ndcg_at_10, 10);
    const best = check?.kept ? timed : plain;
    expect(v.chosen.ease_lambda).toBe(best.value);
    expect(v.chosen.ease_session).toEqual(best.session ?? null);
    const all = canonical(ds);
    const head = headItems(all, 40);
    const easeOf = (session: (typeof SESSION_WEIGHTINGS)[number] | null) => easeFromGram(all, head, headGram(all, head, session ?? undefined), v.chosen.ease_lambda);
    const als = await trainIals(all, { ...ALS_DEFAULTS, epochs: v.chosen.ials_epochs });
    const w = v.chosen.ials_weight;
    const modelWith = (session: (typeof SESSION_WEIGHTINGS)[number] | null) => (w === 0 ? easeOf(session) : w === 1 ? als : new BlendModel([easeOf(session), als], [1 - w, w]));
    const expected = modelWith(v.chosen.ease_session);
    for (const h of histories(ds)) expect(Array.from(r.model.score(h))).toEqual(Array.from(expected.score(h)));
    // Had a weighting been chosen instead, the model would differ: the Gram matrices are not the same.
    expect(Array.from(headGram(all, head, SESSION_WEIGHTINGS[0]))).not.toEqual(Array.from(headGram(all, head)));

    // The same interactions without their times: no weighting is tried.
    const flat = new Dataset(sessions().map((x) => ({ ...x, at: 0 })));
    const f = await trainDefault(flat, {}, undefined, { maxItems: 40 });
    expect(f.validation.curve.filter((p) => p.stage === 'ease').map((p) => p.session ?? null)).toEqual(EASE_LAMBDAS.map(() => null));
    expect(f.validation.chosen.ease_session).toBeNull();
    expect(f.validation.session_check).toBeNull();
  });
});
