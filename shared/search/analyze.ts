/** Text analysis of a document: its fields' terms (stemmed, stop words out) and lengths. */
import type { JsonObject } from '../domain/types.ts';
import { stem, STOP_WORDS, words } from './text.ts';
import type { SearchDoc } from './types.ts';

/** The fields BM25F scores, in the order of every per-field array (`lens`, term frequencies). */
export const FIELD_NAMES = ['name', 'description', 'meta'] as const;
export type Field = (typeof FIELD_NAMES)[number];

function metaText(m: JsonObject): string {
  return Object.values(m)
    .filter((v) => typeof v === 'string' || typeof v === 'number')
    .join(' ');
}

export interface Analyzed {
  tf: Map<string, [number, number, number]>;
  len: [number, number, number];
  /**
   * Words that do not start with their own stem's letters all the way ("running" → "run",
   * "hiking" → "hike"), each with its stem: a half-typed last word ("runni", "hikin") is a prefix
   * of the word, not of the stem.
   */
  surface: Map<string, string>;
}

export function analyze(d: SearchDoc): Analyzed {
  const tf = new Map<string, [number, number, number]>();
  const surface = new Map<string, string>();
  const texts = [d.name, d.description ?? '', metaText(d.metadata)];
  const len: [number, number, number] = [0, 0, 0];
  texts.forEach((text, f) => {
    for (const w of words(text)) {
      if (STOP_WORDS.has(w)) continue;
      const t = stem(w);
      if (t !== w) surface.set(w, t);
      let e = tf.get(t);
      if (!e) tf.set(t, (e = [0, 0, 0]));
      e[f] = (e[f] as number) + 1;
      len[f] = (len[f] as number) + 1;
    }
  });
  return { tf, len, surface };
}

/** Each field's average length over n documents from their total lengths (1 when there are none). */
export const averageLengths = (sums: readonly number[], n: number): number[] => sums.map((sum) => (n ? sum / n : 0) || 1);
