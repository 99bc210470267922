import type { IndexParts, SearchDoc } from './engine.ts';

/*
 * The index artifact: one JSON header (documents, vocabulary, section table) followed by the
 * typed arrays as raw little-endian bytes, each section 8-byte aligned, so loading is a JSON
 * parse plus zero-copy views.
 */

type Typed = Uint32Array | Uint16Array | Float32Array | Int8Array | Uint8Array;
const CTORS = { Uint32Array, Uint16Array, Float32Array, Int8Array, Uint8Array } as const;
type CtorName = keyof typeof CTORS;

interface Header {
  format: 'recsearch-index-v1';
  dims: number;
  builtAt: number;
  docs: Omit<SearchDoc, 'vector'>[];
  vocab: string[];
  sections: { name: string; type: CtorName; offset: number; length: number }[];
  lists: number;
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
    ...(p.ivf ? [['centroids', p.ivf.centroids] as [string, Typed], ...p.ivf.lists.map((l, i): [string, Typed] => [`list${i}`, l])] : []),
  ];
  let offset = 0;
  const sections = arrays.map(([name, a]) => {
    const s = { name, type: a.constructor.name as CtorName, offset, length: a.length };
    offset += Math.ceil(a.byteLength / 8) * 8;
    return s;
  });
  const header: Header = {
    format: 'recsearch-index-v1',
    dims: p.dims,
    builtAt: p.builtAt,
    docs: p.docs.map(({ vector: _v, ...d }) => d),
    vocab: p.vocab,
    sections,
    lists: p.ivf?.lists.length ?? 0,
  };
  const json = Buffer.from(JSON.stringify(header));
  const headLen = Math.ceil((8 + json.length) / 8) * 8;
  const out = new Uint8Array(headLen + offset);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 8);
  arrays.forEach(([, a], i) => out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), headLen + (sections[i] as { offset: number }).offset));
  return out;
}

export function unpackIndex(bytes: Uint8Array): IndexParts {
  // Copy once so every section is aligned within its own buffer.
  const buf = new Uint8Array(bytes).buffer;
  const jsonLen = new DataView(buf).getUint32(0, true);
  const header = JSON.parse(Buffer.from(buf, 8, jsonLen).toString('utf8')) as Header;
  if (header.format !== 'recsearch-index-v1') throw new Error(`Unknown index format ${String(header.format)}`);
  const headLen = Math.ceil((8 + jsonLen) / 8) * 8;
  const get = (name: string): Typed => {
    const s = header.sections.find((x) => x.name === name);
    if (!s) throw new Error(`Index artifact lacks section ${name}`);
    return new CTORS[s.type](buf, headLen + s.offset, s.length);
  };
  return {
    docs: header.docs.map((d) => ({ ...d, vector: null })),
    dims: header.dims,
    builtAt: header.builtAt,
    vocab: header.vocab,
    offsets: get('offsets') as Uint32Array,
    postingDocs: get('postingDocs') as Uint32Array,
    postingTfs: get('postingTfs') as Uint16Array,
    lens: [0, 1, 2].map((i) => get(`lens${i}`) as Float32Array),
    vectors: get('vectors') as Int8Array,
    scales: get('scales') as Float32Array,
    hasVector: get('hasVector') as Uint8Array,
    ivf: header.lists
      ? { centroids: get('centroids') as Float32Array, lists: Array.from({ length: header.lists }, (_, i) => get(`list${i}`) as Uint32Array) }
      : null,
  };
}
