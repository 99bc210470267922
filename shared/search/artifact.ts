import { packSections, unpackSections, type Typed } from '../sections.ts';
import type { IndexParts, SearchDoc } from './engine.ts';

/** The index artifact: documents and vocabulary in the header, postings and vectors as sections. */
interface Header {
  format: 'recsearch-index-v1';
  dims: number;
  builtAt: number;
  docs: Omit<SearchDoc, 'vector'>[];
  vocab: string[];
  /** Words whose stem differs from them (their stems' vocab indexes in section `surfaceStem`); absent in older artifacts. */
  surface?: string[];
  lists: number;
  /** Whether section `surfaceDf` (documents per surface word) is there; absent in older artifacts. */
  surfaceDf?: boolean;
}

export function packIndex(p: IndexParts): Uint8Array {
  const arrays: [string, Typed][] = [
    ['offsets', p.offsets],
    ['postingDocs', p.postingDocs],
    ['postingTfs', p.postingTfs],
    ...p.lens.map((l, i): [string, Typed] => [`lens${i}`, l]),
    ['vectors', p.vectors],
    ['scales', p.scales],
    ['hasVector', p.hasVector],
    ['surfaceStem', p.surfaceStem],
    ...(p.surfaceDf ? [['surfaceDf', p.surfaceDf] as [string, Typed]] : []),
    ...(p.ivf ? [['centroids', p.ivf.centroids] as [string, Typed], ...p.ivf.lists.map((l, i): [string, Typed] => [`list${i}`, l])] : []),
  ];
  const header: Header = {
    format: 'recsearch-index-v1',
    dims: p.dims,
    builtAt: p.builtAt,
    docs: p.docs.map(({ vector: _v, ...d }) => d),
    vocab: p.vocab,
    surface: p.surface,
    lists: p.ivf?.lists.length ?? 0,
    ...(p.surfaceDf ? { surfaceDf: true } : {}),
  };
  return packSections(header, arrays);
}

export function unpackIndex(bytes: Uint8Array): IndexParts {
  const { header, get } = unpackSections<Header>(bytes);
  if (header.format !== 'recsearch-index-v1') throw new Error(`Unknown index format ${String(header.format)}`);
  return {
    // One object shape for every document (fields in a fixed order): ranking reads `id` and
    // `active` of thousands of them per query, which is several times slower on mixed shapes.
    docs: header.docs.map((d) => ({
      id: d.id,
      name: d.name,
      description: d.description,
      metadata: d.metadata,
      active: d.active,
      created: d.created,
      updated_at: d.updated_at,
      embedding_updated_at: d.embedding_updated_at,
      vector: null,
    })),
    dims: header.dims,
    builtAt: header.builtAt,
    vocab: header.vocab,
    // Artifacts built before words were kept match a half-typed word against stems only.
    surface: header.surface ?? [],
    surfaceStem: header.surface ? get<Uint32Array>('surfaceStem') : new Uint32Array(0),
    // Artifacts built before it was kept take every surface word as held by a live document.
    surfaceDf: header.surface && header.surfaceDf ? get<Uint32Array>('surfaceDf') : undefined,
    offsets: get<Uint32Array>('offsets'),
    postingDocs: get<Uint32Array>('postingDocs'),
    postingTfs: get<Uint16Array>('postingTfs'),
    lens: [0, 1, 2].map((i) => get<Float32Array>(`lens${i}`)),
    vectors: get<Int8Array>('vectors'),
    scales: get<Float32Array>('scales'),
    hasVector: get<Uint8Array>('hasVector'),
    ivf: header.lists ? { centroids: get<Float32Array>('centroids'), lists: Array.from({ length: header.lists }, (_, i) => get<Uint32Array>(`list${i}`)) } : null,
  };
}
