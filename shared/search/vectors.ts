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
