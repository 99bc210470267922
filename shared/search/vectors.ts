import { normalize } from './embedding.ts';
import type { SearchDoc, SearchIndex } from './engine.ts';
import type { PreparedDelta } from './rank.ts';

/** A document's vector as a unit vector (the delta's own, or the index's dequantised), or null. */
export function unitVector(index: SearchIndex, delta: PreparedDelta, d: SearchDoc): Float32Array | null {
  if (d.vector && d.vector.length === index.dims) return normalize(Float32Array.from(d.vector));
  const i = delta.get(d.id) ? undefined : index.byId.get(d.id);
  const v = i === undefined ? null : index.vectorOf(i);
  return v ? normalize(v) : null;
}

/**
 * Cosine similarity to a document, for any number of others: documents of the index through its
 * int8 kernel (no vector read back), the delta's through their own vectors. 0 without vectors.
 */
export function similarityIn(index: SearchIndex, delta: PreparedDelta): (a: { doc: SearchDoc }) => (b: { doc: SearchDoc }) => number {
  return ({ doc: a }) => {
    const q = unitVector(index, delta, a);
    if (!q) return () => 0;
    const indexed = index.similarityTo(q);
    return ({ doc: b }) => {
      const i = delta.get(b.id) ? undefined : index.byId.get(b.id);
      if (i !== undefined) return indexed(i);
      const v = b.vector;
      if (!v || v.length !== q.length) return 0;
      let dot = 0;
      let norm = 0;
      for (let d = 0; d < v.length; d++) {
        dot += (v[d] as number) * (q[d] as number);
        norm += (v[d] as number) * (v[d] as number);
      }
      return norm > 0 ? dot / Math.sqrt(norm) : 0;
    };
  };
}
