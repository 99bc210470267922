import * as z from 'zod/mini';
import { runInTurns, runNow } from '../concurrency.ts';
import { packSections, unpackSections, type Sections, type Typed } from '../sections.ts';
import { AlsModel, BlendModel, DenseHeadModel } from './blend.ts';
import { F32Rows } from './f32-rows.ts';
import type { Dataset } from './dataset.ts';
import { FactorModel, ItemItemModel, popularityModel, Stopped, tick, type History, type Model, type TrainHooks } from './models.ts';

/** A trained model as stored: algorithm and item ids in the header, the model's arrays as sections. */
interface Header {
  format: 'recsearch-model-v1';
  algorithm: string;
  items: number[];
  factors?: number;
  /** Present when the artifact carries the users' training histories (see UserHistories). */
  users?: string[];
  trainedBefore?: number;
  trainedTypes?: string[];
  eventsThrough?: number;
  /** Present when the artifact carries users' events on items training did not read (see UnreadItems): those users, sorted. */
  unreadUsers?: string[];
  /** Present when the artifact carries the event type weights it was trained with: [name, weight] pairs. */
  typeWeights?: [string, number][];
  /**
   * How the model's arrays are stored, for the models that came with the default (EASE with
   * every weight, iALS, their blend); absent for the others, stored as before (`algorithm`,
   * `factors` and the sections `off`/`nbr`/`w` or `q`/`bias`), so older artifacts load as they did.
   */
  model?: ModelSpec;
}

/** A model as stored: its kind, its scalars, its sections (named from `prefix`) and, for a blend, its parts. */
export type ModelSpec =
  | { kind: 'dense_head'; algorithm: string; prefix: string }
  | { kind: 'ials'; factors: number; alpha0: number; lambda: number; prefix: string; users?: boolean }
  | { kind: 'item_item'; algorithm: string; prefix: string }
  | { kind: 'factor'; algorithm: string; factors: number; prefix: string }
  | { kind: 'popularity' }
  | { kind: 'blend'; algorithm: string; weights: number[]; parts: ModelSpec[] };

/** The stored spec, checked as it is read (an artifact is bytes from a blob store). */
const modelSpec: z.ZodMiniType<ModelSpec> = z.lazy(() =>
  z.union([
    z.object({ kind: z.literal('dense_head'), algorithm: z.string(), prefix: z.string() }),
    z.object({ kind: z.literal('ials'), factors: z.int().check(z.positive()), alpha0: z.number(), lambda: z.number(), prefix: z.string(), users: z.optional(z.boolean()) }),
    z.object({ kind: z.literal('item_item'), algorithm: z.string(), prefix: z.string() }),
    z.object({ kind: z.literal('factor'), algorithm: z.string(), factors: z.int().check(z.positive()), prefix: z.string() }),
    z.object({ kind: z.literal('popularity') }),
    z.object({ kind: z.literal('blend'), algorithm: z.string(), weights: z.array(z.number()), parts: z.array(modelSpec) }),
  ]),
);

/**
 * Each user's interactions as training read them, so serving reads from the table only the
 * events that came after: a user's whole history counts, not just the latest events a request
 * can afford to read. The events of trained types as the model saw them, and up to
 * `eventsThrough` those of other types with their event type's weight, as serving weighs them.
 * Users sorted (binary search, no per-container map); CSR rows of item indexes (ascending, as
 * Dataset keeps them: serving looks items up in a row by binary search) and summed weights.
 */
export interface UserHistories {
  users: string[];
  rowStart: Uint32Array;
  items: Uint32Array;
  weights: Float32Array;
  /**
   * Every event created (ingest time, seconds) before this was read by training: serving adds
   * only the events at or after it. Events of the last minute before training are in both, which
   * counts them twice for a while; missing one would be worse.
   */
  trainedBefore: number;
  /** The event types training used: events of other types are in these histories only up to `eventsThrough`. */
  trainedTypes: string[];
  /**
   * Every event with an id up to this one was read by training and is in these histories, so
   * serving reads only the events after it (0: read the latest events, whatever their id).
   */
  eventsThrough: number;
  /** The events up to `eventsThrough` on items training did not read (absent in artifacts from before 2026-12-06, and when there are none). */
  unread?: UnreadItems;
}

/**
 * Each user's events up to `eventsThrough` on items training did not read (stored after its
 * catalog read began: an id above the highest taken then, or one taken before whose row was
 * stored since, its events stored since the read began; events on deleted items, or on ids not
 * handed out by the end of the events read, are not kept): not training data, and serving reads no
 * event up to `eventsThrough`, so without them the user's taste missed them and the items were
 * not seen (until 2026-12-06 such an item could be recommended back to the user). Serving adds
 * them to the request's history as it adds a latest event on an item the model never saw (in
 * the taste, seen), leaving out items no longer in the catalog. Users sorted; CSR rows of item ids
 * (the catalog's, not the model's indexes: the model has none for them), ascending, with
 * summed weights (each event type's as the artifact's `typeWeights`).
 */
export interface UnreadItems {
  users: string[];
  rowStart: Uint32Array;
  items: Float64Array;
  weights: Float32Array;
}

/** What serving needs: the model, the item ids of its indexes, and popularity for fallbacks. */
export interface ModelArtifact {
  model: Model;
  items: number[];
  popularity: Float32Array;
  histories?: UserHistories;
  /**
   * The weight of each event type as this model was trained (a trained type's: its event type's
   * weight times the template's; any other type's: its event type's weight then): serving weighs
   * a user's latest events by these, so a weight change takes effect at the next run. Absent in
   * artifacts trained before they were stored.
   */
  typeWeights?: Map<string, number>;
}

/** The histories of a training data set, users sorted. */
export function historiesOf(ds: Dataset, trainedBefore: number, trainedTypes: string[], eventsThrough: number): UserHistories {
  const order = ds.users.map((_, u) => u).sort((a, b) => ((ds.users[a] as string) < (ds.users[b] as string) ? -1 : 1));
  const rowStart = new Uint32Array(order.length + 1);
  const items = new Uint32Array(ds.nnz);
  const weights = new Float32Array(ds.nnz);
  let k = 0;
  order.forEach((u, r) => {
    rowStart[r] = k;
    const row = ds.row(u);
    items.set(row.items, k);
    weights.set(row.weights, k);
    k += row.items.length;
  });
  rowStart[order.length] = k;
  return { users: order.map((u) => ds.users[u] as string), rowStart, items, weights, trainedBefore, trainedTypes, eventsThrough };
}

/** The users' events on items training did not read, summed per user and item; undefined when there are none. */
export function unreadItemsOf(events: readonly { user: string; item: number; weight: number }[]): UnreadItems | undefined {
  if (events.length === 0) return undefined;
  const byUser = new Map<string, Map<number, number>>();
  for (const x of events) {
    let row = byUser.get(x.user);
    if (!row) byUser.set(x.user, (row = new Map()));
    row.set(x.item, (row.get(x.item) ?? 0) + x.weight);
  }
  const users = [...byUser.keys()].sort((a, b) => (a < b ? -1 : 1));
  const rowStart = new Uint32Array(users.length + 1);
  const items = new Float64Array(events.length);
  const weights = new Float32Array(events.length);
  let k = 0;
  users.forEach((user, r) => {
    rowStart[r] = k;
    for (const [item, w] of [...(byUser.get(user) as Map<number, number>)].sort((a, b) => a[0] - b[0])) {
      items[k] = item;
      weights[k] = w;
      k++;
    }
  });
  rowStart[users.length] = k;
  return { users, rowStart, items: items.slice(0, k), weights: weights.slice(0, k) };
}

/** The row of `user` in sorted `users` (binary search), or -1. */
function rowOf(users: readonly string[], user: string): number {
  let lo = 0;
  let hi = users.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const u = users[mid] as string;
    if (u === user) return mid;
    if (u < user) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** A user's training history (item indexes of the model, weights, and its row), if training saw the user. */
export function historyOf(h: UserHistories, user: string): History | undefined {
  const r = rowOf(h.users, user);
  if (r < 0) return undefined;
  const s = h.rowStart[r] as number;
  const e = h.rowStart[r + 1] as number;
  return { items: h.items.subarray(s, e), weights: h.weights.subarray(s, e), row: r };
}

/** A user's events up to `eventsThrough` on items training did not read (item ids, weights), if any. */
export function unreadOf(h: UserHistories, user: string): { items: Float64Array; weights: Float32Array } | undefined {
  const u = h.unread;
  const r = u ? rowOf(u.users, user) : -1;
  if (!u || r < 0) return undefined;
  const s = u.rowStart[r] as number;
  const e = u.rowStart[r + 1] as number;
  return { items: u.items.subarray(s, e), weights: u.weights.subarray(s, e) };
}

/** Whether the histories hold anything of a user `holds` names: a history row or events on items training did not read. */
export function holdsAnyOf(h: UserHistories, holds: (user: string) => boolean): boolean {
  return h.users.some(holds) || (h.unread?.users.some(holds) ?? false);
}

/**
 * Folds every user row of `h` into each iALS part of `m` (AlsModel.userVectors, stored with the
 * artifact), as serving would fold it in for that history: a request whose history is a trained
 * row then skips the fold-in. Yields to the event loop every 50 ms.
 */
export async function foldInUsers(m: Model, h: UserHistories, hooks: TrainHooks = {}): Promise<void> {
  if (m instanceof BlendModel) {
    for (const p of m.parts) await foldInUsers(p, h, hooks);
    return;
  }
  if (!(m instanceof AlsModel)) return;
  const d = m.factors;
  const out = new Float32Array(h.users.length * d);
  let last = performance.now();
  for (let r = 0; r < h.users.length; r++) {
    const s = h.rowStart[r] as number;
    const e = h.rowStart[r + 1] as number;
    out.set(m.userVector({ items: h.items.subarray(s, e), weights: h.weights.subarray(s, e) }), r * d);
    if (performance.now() - last > 50) {
      await tick();
      if (hooks.shouldStop?.()) throw new Stopped('stopped');
      last = performance.now();
    }
  }
  m.userVectors = out;
}

/** Rows `keep` (ascending row indexes) of CSR rows (`rowStart`, `items`, `weights`), packed anew. */
function keptRows<I extends Uint32Array | Float64Array>(rows: { rowStart: Uint32Array; items: I; weights: Float32Array }, keep: readonly number[], make: (n: number) => I) {
  const rowStart = new Uint32Array(keep.length + 1);
  let size = 0;
  for (const [k, r] of keep.entries()) rowStart[k + 1] = size += (rows.rowStart[r + 1] as number) - (rows.rowStart[r] as number);
  const items = make(size);
  const weights = new Float32Array(size);
  for (const [k, r] of keep.entries()) {
    const [s, e] = [rows.rowStart[r] as number, rows.rowStart[r + 1] as number];
    items.set(rows.items.subarray(s, e), rowStart[k] as number);
    weights.set(rows.weights.subarray(s, e), rowStart[k] as number);
  }
  return { rowStart, items, weights };
}

/** `u` without `drop`'s users (undefined when none is left). */
function unreadWithout(u: UnreadItems, drop: (user: string) => boolean): UnreadItems | undefined {
  const keep = u.users.flatMap((user, r) => (drop(user) ? [] : [r]));
  if (keep.length === 0) return undefined;
  return { users: keep.map((r) => u.users[r] as string), ...keptRows(u, keep, (n) => new Float64Array(n)) };
}

/**
 * The artifact without `drop`'s users: their history rows, their events on items training did
 * not read and their iALS user vectors (in every part of a blend) leave it, the other users' rows
 * stay as they were. Undefined when it holds none of them. An erasure rewrites every stored
 * version with it; a run about to store its artifact, with the users whose erasure began before it is done.
 */
export function withoutUsers(a: ModelArtifact, drop: (user: string) => boolean): ModelArtifact | undefined {
  const h = a.histories;
  if (!h) return undefined;
  const keep: number[] = [];
  for (let r = 0; r < h.users.length; r++) if (!drop(h.users[r] as string)) keep.push(r);
  const unreadDropped = h.unread?.users.some(drop) ?? false;
  if (keep.length === h.users.length && !unreadDropped) return undefined;
  // (An unread user who is also in `users` is dropped from both: the same `drop`.)
  const { unread: _, ...rest } = h;
  const unread = h.unread && unreadDropped ? unreadWithout(h.unread, drop) : h.unread;
  if (keep.length === h.users.length) return { ...a, histories: { ...rest, ...(unread ? { unread } : {}) } };
  const rows = keptRows(h, keep, (n) => new Uint32Array(n));
  const vectorsKept = (m: Model): void => {
    if (m instanceof BlendModel) m.parts.forEach(vectorsKept);
    else if (m instanceof AlsModel && m.userVectors) {
      const d = m.factors;
      const from = m.userVectors;
      const out = new Float32Array(keep.length * d);
      for (const [k, r] of keep.entries()) out.set(from.subarray(r * d, (r + 1) * d), k * d);
      m.userVectors = out;
    }
  };
  vectorsKept(a.model);
  return { ...a, histories: { ...rest, users: keep.map((r) => h.users[r] as string), ...rows, ...(unread ? { unread } : {}) } };
}

/** A Float64Array's bytes as 32-bit words (sections hold no 64-bit type), to store it exactly. */
const words = (a: Float64Array) => new Uint32Array(a.buffer, a.byteOffset, a.length * 2);

/**
 * Adds a model's arrays to `arrays`, their names starting with `prefix`, and answers its spec.
 * Every array is stored as the model scores with it, so the loaded model scores exactly as the
 * trained one (iALS's QᵀQ too, bit for bit, rather than recomputed).
 */
function specOf(m: Model, prefix: string, arrays: [string, Typed][], userCount: number): ModelSpec {
  if (m instanceof DenseHeadModel) {
    arrays.push([`${prefix}head`, m.head], [`${prefix}b`, m.b]);
    return { kind: 'dense_head', algorithm: m.algorithm, prefix };
  }
  if (m instanceof AlsModel) {
    arrays.push([`${prefix}q`, m.q], [`${prefix}gram`, words(m.gram)]);
    // The users' vectors belong to the histories stored beside them (foldInUsers).
    const users = m.userVectors !== undefined && userCount > 0 && m.userVectors.length === userCount * m.factors;
    if (users) arrays.push([`${prefix}users`, m.userVectors as Float32Array]);
    return { kind: 'ials', factors: m.factors, alpha0: m.alpha0, lambda: m.lambda, prefix, ...(users ? { users } : {}) };
  }
  if (m instanceof ItemItemModel) {
    arrays.push([`${prefix}off`, m.off], [`${prefix}nbr`, m.nbr], [`${prefix}w`, m.w]);
    return { kind: 'item_item', algorithm: m.algorithm, prefix };
  }
  if (m instanceof FactorModel) {
    arrays.push([`${prefix}q`, m.q], [`${prefix}bias`, m.bias]);
    return { kind: 'factor', algorithm: m.algorithm, factors: m.factors, prefix };
  }
  if (m instanceof BlendModel) return { kind: 'blend', algorithm: m.algorithm, weights: [...m.weights], parts: m.parts.map((p, k) => specOf(p, `${prefix}${k}_`, arrays, userCount)) };
  if (m.algorithm === 'popularity') return { kind: 'popularity' };
  throw new Error(`Cannot store a model of algorithm ${m.algorithm}`);
}

/** The model a spec describes, from the artifact's sections. */
/**
 * The model of a spec from the artifact's sections, pausing (`yield`) every few MB copied. The
 * sections the model keeps in a kernel's memory (EASE's head weights, iALS's item factors) are
 * copied there straight from the artifact (`view`), not into buffers of their own first.
 */
function* modelOf(s: ModelSpec, n: number, userCount: number, popularity: Float32Array, sections: Sections<Header>): Generator<void, Model, void> {
  switch (s.kind) {
    case 'dense_head': {
      const head = yield* sections.copying<Uint32Array>(`${s.prefix}head`);
      const b = sections.view<Float32Array>(`${s.prefix}b`);
      if (b.length !== head.length ** 2 || head.some((i) => i >= n)) throw new Error('Artifact has an EASE head that does not fit its items');
      return new DenseHeadModel(s.algorithm, n, head, yield* F32Rows.filling(b, head.length, head.length));
    }
    case 'ials': {
      const q = sections.view<Float32Array>(`${s.prefix}q`);
      const gram = new Float64Array((yield* sections.copying<Uint32Array>(`${s.prefix}gram`)).buffer);
      if (q.length !== n * s.factors || gram.length !== s.factors ** 2) throw new Error('Artifact has iALS factors that do not fit its items');
      const m = new AlsModel(n, s.factors, yield* F32Rows.filling(q, n, s.factors), gram, s.alpha0, s.lambda);
      if (s.users) {
        m.userVectors = yield* sections.copying<Float32Array>(`${s.prefix}users`);
        if (m.userVectors.length !== userCount * s.factors) throw new Error('Artifact has iALS user vectors that do not fit its users');
      }
      return m;
    }
    case 'item_item':
      return yield* itemItemModel(s.algorithm, n, sections, s.prefix);
    case 'factor':
      return yield* factorModel(s.algorithm, n, s.factors, sections, s.prefix);
    case 'popularity':
      return popularityModel(popularity);
    case 'blend': {
      const parts: Model[] = [];
      for (const p of s.parts) parts.push(yield* modelOf(p, n, userCount, popularity, sections));
      return new BlendModel(parts, s.weights, s.algorithm);
    }
  }
}

function* itemItemModel(algorithm: string, n: number, sections: Sections<Header>, prefix = ''): Generator<void, Model, void> {
  const off = yield* sections.copying<Uint32Array>(`${prefix}off`);
  const nbr = yield* sections.copying<Uint32Array>(`${prefix}nbr`);
  return new ItemItemModel(algorithm, n, off, nbr, yield* sections.copying<Float32Array>(`${prefix}w`));
}

function* factorModel(algorithm: string, n: number, factors: number, sections: Sections<Header>, prefix = ''): Generator<void, Model, void> {
  const q = yield* sections.copying<Float32Array>(`${prefix}q`);
  return new FactorModel(algorithm, n, factors, q, yield* sections.copying<Float32Array>(`${prefix}bias`));
}

export function packModel(a: ModelArtifact): Uint8Array {
  const m = a.model;
  const arrays: [string, Typed][] = [['popularity', a.popularity]];
  let factors: number | undefined;
  let spec: ModelSpec | undefined;
  // The models stored before specs keep their layout (older code reads them as it did).
  if (m instanceof ItemItemModel) arrays.push(['off', m.off], ['nbr', m.nbr], ['w', m.w]);
  else if (m instanceof FactorModel) {
    arrays.push(['q', m.q], ['bias', m.bias]);
    factors = m.factors;
  } else if (m.algorithm !== 'popularity') spec = specOf(m, 'm_', arrays, a.histories?.users.length ?? 0);
  const h = a.histories;
  if (h) arrays.push(['user_rows', h.rowStart], ['user_items', h.items], ['user_weights', h.weights]);
  const u = h?.unread;
  if (u) arrays.push(['unread_rows', u.rowStart], ['unread_items', words(u.items)], ['unread_weights', u.weights]);
  const header: Header = {
    format: 'recsearch-model-v1',
    algorithm: m.algorithm,
    items: a.items,
    ...(factors ? { factors } : {}),
    ...(h ? { users: h.users, trainedBefore: h.trainedBefore, trainedTypes: h.trainedTypes, eventsThrough: h.eventsThrough } : {}),
    ...(u ? { unreadUsers: u.users } : {}),
    ...(a.typeWeights ? { typeWeights: [...a.typeWeights] } : {}),
    ...(spec ? { model: spec } : {}),
  };
  return packSections(header, arrays);
}

/** A model artifact's parts, made at once. */
export function unpackModel(bytes: Uint8Array): ModelArtifact {
  return runNow(unpackingModel(bytes));
}

/** `unpackModel`, the thread's other work served while its sections are copied (`unpackingModel`). */
export function unpackModelInTurns(bytes: Uint8Array): Promise<ModelArtifact> {
  return runInTurns(unpackingModel(bytes));
}

/**
 * The artifact's parts, pausing (`yield`) every few MB copied: a large tenant's model is tens of
 * MB (iALS's item and user factors, EASE's head, the users' histories), which made at once held
 * its container for 0.25-0.46 s (50,000 items and users, 86 MB).
 */
function* unpackingModel(bytes: Uint8Array): Generator<void, ModelArtifact, void> {
  const sections = unpackSections<Header>(bytes);
  const h = sections.header;
  if (h.format !== 'recsearch-model-v1') throw new Error('Unknown model format');
  const popularity = yield* sections.copying<Float32Array>('popularity');
  const n = h.items.length;
  let model: Model;
  if (h.model !== undefined) model = yield* modelOf(z.parse(modelSpec, h.model), n, h.users?.length ?? 0, popularity, sections);
  else if (h.algorithm === 'popularity') model = popularityModel(popularity);
  else if (h.factors) model = yield* factorModel(h.algorithm, n, h.factors, sections);
  else model = yield* itemItemModel(h.algorithm, n, sections);
  // Artifacts trained before histories were stored have none: serving reads the latest events only.
  const histories: UserHistories | undefined = h.users
    ? {
        users: h.users,
        rowStart: yield* sections.copying<Uint32Array>('user_rows'),
        items: yield* sections.copying<Uint32Array>('user_items'),
        weights: yield* sections.copying<Float32Array>('user_weights'),
        trainedBefore: h.trainedBefore ?? 0,
        trainedTypes: h.trainedTypes ?? [],
        eventsThrough: h.eventsThrough ?? 0,
        ...(h.unreadUsers
          ? {
              unread: {
                users: h.unreadUsers,
                rowStart: yield* sections.copying<Uint32Array>('unread_rows'),
                items: new Float64Array((yield* sections.copying<Uint32Array>('unread_items')).buffer),
                weights: yield* sections.copying<Float32Array>('unread_weights'),
              },
            }
          : {}),
      }
    : undefined;
  // Pairs, not an object: a type may be called `constructor`.
  return { model, items: h.items, popularity, ...(histories ? { histories } : {}), ...(h.typeWeights ? { typeWeights: new Map(h.typeWeights) } : {}) };
}
