/** Item vectors across the build and its delta: taste sums, unit vectors, similarity to a document. */
import type { PreparedDelta } from './delta.ts';
import { normalize } from './embedding.ts';
import type { SearchIndex } from './engine.ts';
import type { SearchDoc } from './types.ts';

/**
 * Adds Σ weights[j] × the vector of docs[j] to `into`: a fresh document's own vector, an indexed
 * one read in place (no dequantised copy). False when none has a vector of that size.
 */
export function addDocVectors(index: SearchIndex, docs: readonly (SearchDoc | undefined)[], docWeights: readonly number[], into: Float32Array): boolean {
  let any = false;
  const rows: number[] = [];
  const weights: number[] = [];
  for (let j = 0; j < docs.length; j++) {
    const d = docs[j];
    const w = docWeights[j] as number;
    if (!d) continue;
    if (d.vector) {
      if (d.vector.length !== into.length) continue;
      for (let k = 0; k < into.length; k++) into[k] = (into[k] as number) + w * (d.vector[k] as number);
      any = true;
      continue;
    }
    const i = index.byId.get(d.id);
    if (i === undefined || index.docs[i] !== d) continue;
    rows.push(i);
    weights.push(w);
  }
  return index.addVectorsTo(rows, weights, into) > 0 || any;
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
