import { runInTurns, runNow } from '../concurrency.ts';
import { packSections, unpackSections, type Typed } from '../sections.ts';
import type { IndexParts, SearchDoc } from './engine.ts';

/**
 * The index artifact: the vocabulary in the header, documents as JSON sections of DOC_CHUNK each
 * (in the header in artifacts made before 2026-12-03), postings and vectors as sections.
 * Readers read every older artifact. A change that the code before it would misread (a field it
 * needs moved or given another meaning) takes a new `format`: that code refuses the artifact
 * (`UnreadableBuild`) and serves an older build with the changes since it (shared/search/views.ts
 * `loadIndex`), as its containers do while a deploy replaces them.
 */
interface Header {
  format: 'recsearch-index-v1';
  dims: number;
  builtAt: number;
  /** Artifacts made before 2026-12-03: every document here; since, in `docChunks` sections `docs<i>`. */
  docs?: Omit<SearchDoc, 'vector'>[];
  docChunks?: number;
  vocab: string[];
  /** Words whose stem differs from them (their stems' vocab indexes in section `surfaceStem`); absent in older artifacts. */
  surface?: string[];
  lists: number;
  /** Whether section `surfaceDf` (documents per surface word) is there; absent in older artifacts. */
  surfaceDf?: boolean;
}

/**
 * Documents per JSON section: decoding a 100,000-item build's documents took 0.8-0.9 s in one go
 * (one parse of the whole header), during which the container served nothing; in sections of
 * this many, a load decodes one at a time with the thread's other work between
 * (`unpackIndexInTurns`), about 15-20 ms each.
 */
const DOC_CHUNK = 2000;

export function packIndex(p: IndexParts): Uint8Array {
  const docChunks = Math.ceil(p.docs.length / DOC_CHUNK);
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
    // Each a Uint8Array of its own (a Buffer's section type would be Buffer, which sections do not know).
    ...Array.from({ length: docChunks }, (_, i): [string, Typed] => [
      `docs${i}`,
      new TextEncoder().encode(JSON.stringify(p.docs.slice(i * DOC_CHUNK, (i + 1) * DOC_CHUNK).map(({ vector: _v, ...d }) => d))),
    ]),
  ];
  const header: Header = {
    format: 'recsearch-index-v1',
    dims: p.dims,
    builtAt: p.builtAt,
    docChunks,
    vocab: p.vocab,
    surface: p.surface,
    lists: p.ivf?.lists.length ?? 0,
    ...(p.surfaceDf ? { surfaceDf: true } : {}),
  };
  return packSections(header, arrays);
}

/** An index artifact's parts, decoded at once. */
export function unpackIndex(bytes: Uint8Array): IndexParts {
  return runNow(unpacking(bytes));
}

/** `unpackIndex` a section of documents at a time, the thread's other work served between. */
export function unpackIndexInTurns(bytes: Uint8Array): Promise<IndexParts> {
  return runInTurns(unpacking(bytes));
}

// One object shape for every document (fields in a fixed order): ranking reads `id` and
// `active` of thousands of them per query, which is several times slower on mixed shapes.
const searchDoc = (d: Omit<SearchDoc, 'vector'>): SearchDoc => ({
  id: d.id,
  name: d.name,
  description: d.description,
  metadata: d.metadata,
  active: d.active,
  created: d.created,
  updated_at: d.updated_at,
  embedding_updated_at: d.embedding_updated_at,
  // When its vector was saved, to the ms (a later page's `vectorsAsOf`; undefined in builds made before 2026-12-05).
  embedded_ms: d.embedded_ms,
  // When its first vector was saved (a later page's `hadVectorBy`; undefined in builds made before 2026-12-07).
  first_embedded_ms: d.first_embedded_ms,
  vector: null,
});

/**
 * The artifact's parts, pausing (a `yield`) after each section of documents decoded and every few
 * MB of the postings copied. The vectors are read in place (a view of the artifact): the index
 * copies them into the kernel's memory at once (`SearchIndex`), and a copy of its own first took
 * 0.14-0.2 s in one step for a 100,000-item build's 51 MB.
 */
function* unpacking(bytes: Uint8Array): Generator<void, IndexParts, void> {
  const { header, get, copying, view } = unpackSections<Header>(bytes);
  if (header.format !== 'recsearch-index-v1') throw new Error(`Unknown index format ${String(header.format)}`);
  const docs: SearchDoc[] = header.docs ? header.docs.map(searchDoc) : [];
  for (let i = 0; i < (header.docChunks ?? 0); i++) {
    const json = get<Uint8Array>(`docs${i}`);
    const chunk = JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')) as Omit<SearchDoc, 'vector'>[];
    for (const d of chunk) docs.push(searchDoc(d));
    yield;
  }
  const postingDocs = yield* copying<Uint32Array>('postingDocs');
  yield;
  const postingTfs = yield* copying<Uint16Array>('postingTfs');
  yield;
  return {
    docs,
    dims: header.dims,
    builtAt: header.builtAt,
    vocab: header.vocab,
    // Artifacts built before words were kept match a half-typed word against stems only.
    surface: header.surface ?? [],
    surfaceStem: header.surface ? get<Uint32Array>('surfaceStem') : new Uint32Array(0),
    // Artifacts built before it was kept take every surface word as held by a live document.
    surfaceDf: header.surface && header.surfaceDf ? get<Uint32Array>('surfaceDf') : undefined,
    offsets: get<Uint32Array>('offsets'),
    postingDocs,
    postingTfs,
    lens: [0, 1, 2].map((i) => get<Float32Array>(`lens${i}`)),
    vectors: view<Int8Array>('vectors'),
    scales: get<Float32Array>('scales'),
    hasVector: get<Uint8Array>('hasVector'),
    ivf: header.lists ? { centroids: get<Float32Array>('centroids'), lists: Array.from({ length: header.lists }, (_, i) => get<Uint32Array>(`list${i}`)) } : null,
  };
}
