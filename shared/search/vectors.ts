/** Item vectors across the build and its delta: taste sums, unit vectors, similarity to a document. */
import type { PreparedDelta } from './delta.ts';
import { normalize } from './embedding.ts';
import type { SearchIndex } from './engine.ts';
import type { Int8Rows } from './int8-vectors.ts';
import type { SearchDoc } from './types.ts';

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
    const i = index.byId.get(d.id);
    const at = i !== undefined && index.docs[i] === d ? index.vectorRow(i) : delta.vectorRowOf(d);
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

/** A document's vector as a unit vector (the delta's own, or the index's dequantised), or null. */
export function unitVector(index: SearchIndex, delta: PreparedDelta, d: SearchDoc): Float32Array | null {
  if (d.vector && d.vector.length === index.dims) return normalize(Float32Array.from(d.vector));
  const i = delta.get(d.id) ? undefined : index.byId.get(d.id);
  const v = i === undefined ? null : index.vectorOf(i);
  return v ? normalize(v) : null;
}

/**
 * Cosine similarity to a document, for any number of others: documents of the index through its
 * int8 kernel (no vector read back; an indexed document's own row as the query), the delta's
 * through their own vectors. 0 without vectors.
 */
export function similarityIn(index: SearchIndex, delta: PreparedDelta): (a: { doc: SearchDoc }) => (b: { doc: SearchDoc }) => number {
  const indexOf = (d: SearchDoc) => (delta.get(d.id) ? undefined : index.byId.get(d.id));
  return ({ doc: a }) => {
    const ia = indexOf(a);
    // a's unit vector, made when first needed: against the delta's documents, or any when a is the delta's.
    let q: Float32Array | null | undefined;
    const unit = () => (q === undefined ? (q = unitVector(index, delta, a)) : q);
    // Against indexed documents through the kernel: an indexed a's own int8 row is the query.
    let indexed: ((i: number) => number) | undefined = ia !== undefined ? index.similarityToIndexed(ia) : undefined;
    return ({ doc: b }) => {
      const i = indexOf(b);
      if (i !== undefined) {
        if (!indexed) {
          const u = unit();
          indexed = u ? index.similarityTo(u) : () => 0;
        }
        return indexed(i);
      }
      const u = unit();
      const v = b.vector;
      if (!u || !v || v.length !== u.length) return 0;
      let dot = 0;
      let norm = 0;
      for (let d = 0; d < v.length; d++) {
        dot += (v[d] as number) * (u[d] as number);
        norm += (v[d] as number) * (v[d] as number);
      }
      return norm > 0 ? dot / Math.sqrt(norm) : 0;
    };
  };
}
