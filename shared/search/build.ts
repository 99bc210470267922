/** The index build: postings, vocabulary, field lengths, int8 vectors and IVF over a catalog snapshot. */
import { analyze, FIELD_NAMES } from './analyze.ts';
import { buildIvf, type Ivf } from './ivf.ts';
import { quantiseInto } from './quantise.ts';
import type { SearchDoc } from './types.ts';

/** Everything an index is made of; what the artifact stores. */
export interface IndexParts {
  docs: SearchDoc[];
  dims: number;
  builtAt: number;
  vocab: string[];
  /** Words whose stem differs from them, sorted, and the vocab index of each one's stem. */
  surface: string[];
  surfaceStem: Uint32Array;
  /** How many documents write each surface word (absent in older artifacts). */
  surfaceDf?: Uint32Array | undefined;
  /** postings of vocab[k] are docs[offsets[k]..offsets[k+1]), tfs 3 per posting. */
  offsets: Uint32Array;
  postingDocs: Uint32Array;
  postingTfs: Uint16Array;
  lens: Float32Array[];
  /** Item vectors quantised to int8, one scale per vector: a quarter of the memory of float32. */
  vectors: Int8Array;
  scales: Float32Array;
  hasVector: Uint8Array;
  ivf: Ivf | null;
}

/** Builds the parts of an index over `docs` (the index builder's work). */
export function buildIndexParts(docs: SearchDoc[], dims: number, builtAt: number): IndexParts {
  const n = docs.length;
  const lens = FIELD_NAMES.map(() => new Float32Array(n));
  const tmp = new Map<string, number[]>();
  const surfaces = new Map<string, string>();
  const surfaceCounts = new Map<string, number>();
  docs.forEach((d, i) => {
    const a = analyze(d);
    for (const [w, t] of a.surface) {
      surfaces.set(w, t);
      surfaceCounts.set(w, (surfaceCounts.get(w) ?? 0) + 1);
    }
    a.len.forEach((l, f) => ((lens[f] as Float32Array)[i] = l));
    for (const [t, tf] of a.tf) {
      let p = tmp.get(t);
      if (!p) tmp.set(t, (p = []));
      p.push(i, Math.min(tf[0], 65535), Math.min(tf[1], 65535), Math.min(tf[2], 65535));
    }
  });
  const vocab = [...tmp.keys()].sort();
  const vocabIndex = new Map(vocab.map((t, k) => [t, k]));
  const surface = [...surfaces.keys()].sort();
  const surfaceStem = Uint32Array.from(surface, (w) => vocabIndex.get(surfaces.get(w) as string) as number);
  const surfaceDf = Uint32Array.from(surface, (w) => surfaceCounts.get(w) as number);
  const { offsets, postingDocs, postingTfs } = packPostings(vocab, tmp);
  const { vectors, scales, hasVector } = quantiseDocs(docs, dims);
  const stored = docs.map((d) => ({ ...d, vector: null }));
  return { docs: stored, dims, builtAt, vocab, surface, surfaceStem, surfaceDf, offsets, postingDocs, postingTfs, lens, vectors, scales, hasVector, ivf: buildIvf(vectors, scales, hasVector, dims) };
}

/** Each term's postings (doc, 3 term frequencies: 4 numbers each) as offsets into two typed arrays, in vocabulary order. */
function packPostings(vocab: readonly string[], tmp: ReadonlyMap<string, number[]>): Pick<IndexParts, 'offsets' | 'postingDocs' | 'postingTfs'> {
  const offsets = new Uint32Array(vocab.length + 1);
  let total = 0;
  vocab.forEach((t, k) => {
    offsets[k] = total;
    total += (tmp.get(t) as number[]).length / 4;
  });
  offsets[vocab.length] = total;
  const postingDocs = new Uint32Array(total);
  const postingTfs = new Uint16Array(total * 3);
  vocab.forEach((t, k) => {
    const p = tmp.get(t) as number[];
    const o = offsets[k] as number;
    for (let j = 0; j < p.length / 4; j++) {
      postingDocs[o + j] = p[j * 4] as number;
      postingTfs[(o + j) * 3] = p[j * 4 + 1] as number;
      postingTfs[(o + j) * 3 + 1] = p[j * 4 + 2] as number;
      postingTfs[(o + j) * 3 + 2] = p[j * 4 + 3] as number;
    }
  });
  return { offsets, postingDocs, postingTfs };
}

/** The documents' vectors (those of `dims` values) as int8 rows with a scale each. */
function quantiseDocs(docs: readonly SearchDoc[], dims: number): Pick<IndexParts, 'vectors' | 'scales' | 'hasVector'> {
  const n = docs.length;
  const vectors = new Int8Array(n * dims);
  const scales = new Float32Array(n);
  const hasVector = new Uint8Array(n);
  docs.forEach((d, i) => {
    if (!d.vector || d.vector.length !== dims) return;
    scales[i] = quantiseInto(d.vector, 0, dims, vectors, i * dims);
    hasVector[i] = scales[i] ? 1 : 0;
  });
  return { vectors, scales, hasVector };
}
