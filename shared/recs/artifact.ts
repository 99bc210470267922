import { packSections, unpackSections, type Typed } from '../sections.ts';
import { FactorModel, ItemItemModel, type Model } from './models.ts';

/** A trained model as stored: algorithm and item ids in the header, the model's arrays as sections. */
interface Header {
  format: 'recsearch-model-v1';
  algorithm: string;
  items: number[];
  factors?: number;
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
  const header: Header = { format: 'recsearch-model-v1', algorithm: m.algorithm, items: a.items, ...(factors ? { factors } : {}) };
  return packSections(header, arrays);
}

export function unpackModel(bytes: Uint8Array): ModelArtifact {
  const { header: h, get } = unpackSections<Header>(bytes);
  if (h.format !== 'recsearch-model-v1') throw new Error('Unknown model format');
  const popularity = get<Float32Array>('popularity');
  const n = h.items.length;
  let model: Model;
  if (h.algorithm === 'popularity') model = { algorithm: 'popularity', itemCount: n, score: () => Float32Array.from(popularity) };
  else if (h.factors) model = new FactorModel(h.algorithm, n, h.factors, get('q'), get('bias'));
  else model = new ItemItemModel(h.algorithm, n, get('off'), get('nbr'), get('w'));
  return { model, items: h.items, popularity };
}
