import { FactorModel, ItemItemModel, type Model } from './models.ts';

/*
 * A trained model as stored in the blob store: a JSON header (algorithm, the item ids its
 * indexes stand for, popularity) and the model's typed arrays, 8-byte aligned.
 */

type Typed = Uint32Array | Float32Array;

interface Header {
  format: 'recsearch-model-v1';
  algorithm: string;
  items: number[];
  factors?: number;
  sections: { name: string; type: 'Uint32Array' | 'Float32Array'; offset: number; length: number }[];
}

/** What serving needs: the model, the item ids of its indexes, and popularity for fallbacks. */
export interface ModelArtifact {
  model: Model;
  items: number[];
  popularity: Float32Array;
}

export function packModel(a: ModelArtifact): Uint8Array {
  const m = a.model;
  const arrays: [string, Typed][] = [['popularity', a.popularity]];
  let factors: number | undefined;
  if (m instanceof ItemItemModel) arrays.push(['off', m.off], ['nbr', m.nbr], ['w', m.w]);
  else if (m instanceof FactorModel) {
    arrays.push(['q', m.q], ['bias', m.bias]);
    factors = m.factors;
  }
  let offset = 0;
  const sections = arrays.map(([name, arr]) => {
    const s = { name, type: arr.constructor.name as Header['sections'][number]['type'], offset, length: arr.length };
    offset += Math.ceil(arr.byteLength / 8) * 8;
    return s;
  });
  const header: Header = { format: 'recsearch-model-v1', algorithm: m.algorithm, items: a.items, ...(factors ? { factors } : {}), sections };
  const json = Buffer.from(JSON.stringify(header));
  const headLen = Math.ceil((8 + json.length) / 8) * 8;
  const out = new Uint8Array(headLen + offset);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 8);
  arrays.forEach(([, arr], i) => out.set(new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength), headLen + (sections[i] as { offset: number }).offset));
  return out;
}

export function unpackModel(bytes: Uint8Array): ModelArtifact {
  const buf = new Uint8Array(bytes).buffer;
  const len = new DataView(buf).getUint32(0, true);
  const h = JSON.parse(Buffer.from(buf, 8, len).toString('utf8')) as Header;
  if (h.format !== 'recsearch-model-v1') throw new Error('Unknown model format');
  const headLen = Math.ceil((8 + len) / 8) * 8;
  const get = <T extends Typed>(name: string): T => {
    const s = h.sections.find((x) => x.name === name);
    if (!s) throw new Error(`Model artifact lacks ${name}`);
    return (s.type === 'Uint32Array' ? new Uint32Array(buf, headLen + s.offset, s.length) : new Float32Array(buf, headLen + s.offset, s.length)) as T;
  };
  const popularity = get<Float32Array>('popularity');
  const n = h.items.length;
  let model: Model;
  if (h.algorithm === 'popularity') model = { algorithm: 'popularity', itemCount: n, score: () => Float32Array.from(popularity) };
  else if (h.factors) model = new FactorModel(h.algorithm, n, h.factors, get('q'), get('bias'));
  else model = new ItemItemModel(h.algorithm, n, get('off'), get('nbr'), get('w'));
  return { model, items: h.items, popularity };
}
