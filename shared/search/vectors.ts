/** Item vectors across the build and its delta: taste sums and similarity to a document, from the int8 rows both keep. */
import type { PreparedDelta } from './delta.ts';
import type { SearchIndex } from './engine.ts';
import type { Int8Rows, QueryDot, VectorRow } from './int8-vectors.ts';
import { type SearchDoc, vectorSavedMs } from './types.ts';

/** Where the catalog keeps `d`'s int8 vector: the build's row when `d` is the build's version, else the delta's (undefined when neither holds it with a vector). */
function rowIn(index: SearchIndex, delta: PreparedDelta, d: SearchDoc): VectorRow | undefined {
  const i = index.byId.get(d.id);
  return i !== undefined && index.docs[i] === d ? index.vectorRow(i) : delta.vectorRowOf(d);
}

/**
 * The build's row of item `id` when it holds a vector of it saved at or before `asOf` (ms): on a
 * later page of a search (`Cursor.vectorsAsOf`), the vector to score an item by whose current one
 * was saved after its first page's view (re-embedded since: an edit of its name, description or
 * metadata), the one that page scored it by when the item was not embedded anew between the build
 * and that page too. Undefined when the build holds no such vector (the item had none then, or a
 * build newer than that page's holds its new one).
 */
export function builtVectorAsOf(index: SearchIndex, id: number, asOf: number): number | undefined {
  const i = index.byId.get(id);
  return i !== undefined && index.vectorRow(i) !== undefined && vectorSavedMs(index.docs[i] as SearchDoc) <= asOf ? i : undefined;
}

/**
 * Whether `d`, whose vector was saved after `asOf` (ms) and whose vector of then the build does
 * not hold (`builtVectorAsOf`), had one by then (`first_embedded_ms`): an item created, or first
 * embedded, since the build and embedded anew since a search's first page. That page's vector is
 * overwritten, so a later page scores it by its current one, as any item changed between pages
 * scores as it is now (without one it fell past the cursor and came again; until 2026-12-07).
 */
export const hadVectorBy = (d: SearchDoc, asOf: number): boolean => d.first_embedded_ms !== undefined && d.first_embedded_ms <= asOf;

/**
 * `rowIn` as a later page of a search sees it (`Cursor.vectorsAsOf`): a vector saved after
 * `asOf` (ms) is none, and the build's vector of the item stands for it when that one was saved
 * by then (`builtVectorAsOf`), else its own when it had one by then (`hadVectorBy`: created or
 * first embedded since the build, that vector overwritten), as ranking scores it (rank.ts
 * `withoutVectorsSince`). Until 2026-12-07 such an item had none here: diversity compared it, on
 * later pages only, as similar to nothing, and moved it across the positions served.
 */
function rowAsOf(index: SearchIndex, delta: PreparedDelta, d: SearchDoc, asOf: number): VectorRow | undefined {
  const at = rowIn(index, delta, d);
  if (!at || vectorSavedMs(d) <= asOf) return at;
  const row = builtVectorAsOf(index, d.id, asOf);
  if (row !== undefined) return index.vectorRow(row);
  return hadVectorBy(d, asOf) ? at : undefined;
}

/** Whether the catalog keeps an int8 vector for `d` (its build's or its delta's current version). */
export const holdsVector = (index: SearchIndex, delta: PreparedDelta, d: SearchDoc): boolean => rowIn(index, delta, d) !== undefined;

/**
 * Adds Σ weights[j] × the vector of docs[j] to `into`, each read in place where the catalog keeps
 * it (an int8 row of the build or of the delta, quantised alike), in order through the same
 * kernel: the sum is the same to the last bit whether a document is in the build or changed
 * since. A document that is neither one of the build's nor the delta's current version adds
 * nothing. False when none has a vector of that size.
 */
export function addDocVectors(index: SearchIndex, delta: PreparedDelta, docs: readonly (SearchDoc | undefined)[], docWeights: readonly number[], into: Float32Array): boolean {
  if (into.length !== index.dims) return false;
  let any = false;
  // Consecutive rows of one kernel go in one call (the same sum as one call a row).
  let kernel: Int8Rows | undefined;
  const rows: number[] = [];
  const weights: number[] = [];
  const flush = () => {
    if (kernel && rows.length) kernel.addRows(rows, weights, into);
    rows.length = 0;
    weights.length = 0;
  };
  for (let j = 0; j < docs.length; j++) {
    const d = docs[j];
    if (!d) continue;
    const at = rowIn(index, delta, d);
    if (!at) continue;
    if (at.rows !== kernel) {
      flush();
      kernel = at.rows;
    }
    rows.push(at.row);
    weights.push((docWeights[j] as number) * at.scale);
    any = true;
  }
  flush();
  return any;
}

/**
 * Cosine similarity to a document, for any number of others, from the int8 rows the catalog keeps
 * (the build's or the delta's, quantised alike): a's own row is the query, exactly, against b's
 * row in whichever kernel holds it, so a pair scores the same to the last bit whether either is in
 * the build or changed since. 0 without vectors. With `vectorsAsOf`, the vectors a later page of
 * a search compares (`rowAsOf`).
 */
export function similarityIn(index: SearchIndex, delta: PreparedDelta, vectorsAsOf?: number): (a: { doc: SearchDoc }) => (b: { doc: SearchDoc }) => number {
  const rowOf = (d: SearchDoc) => (vectorsAsOf === undefined ? rowIn(index, delta, d) : rowAsOf(index, delta, d, vectorsAsOf));
  return ({ doc: a }) => {
    const at = rowOf(a);
    if (!at) return () => 0;
    const dims = at.rows.dims;
    const row = at.rows.rows.subarray(at.row * dims, (at.row + 1) * dims);
    let squares = 0;
    for (let k = 0; k < dims; k++) squares += (row[k] as number) * (row[k] as number);
    if (!(squares > 0)) return () => 0;
    const norm = Math.sqrt(squares);
    // a's query in each kernel b's rows are in, made when first needed.
    const queries = new Map<Int8Rows, QueryDot>();
    return ({ doc: b }) => {
      const bt = rowOf(b);
      if (!bt) return 0;
      let dot = queries.get(bt.rows);
      if (!dot) queries.set(bt.rows, (dot = bt.rows.int8Query(row)));
      return (dot(bt.row) * bt.scale) / norm;
    };
  };
}
