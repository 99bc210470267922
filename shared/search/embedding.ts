import { stem, STOP_WORDS, words } from './text.ts';

/** Turns texts into unit vectors. Implementations: local hashing (default), Amazon Bedrock Titan. */
export interface EmbeddingProvider {
  readonly name: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Cosine of two unit vectors (their dot product); 0 when either is missing or the sizes differ. */
export function cosine(a: Float32Array | null, b: Float32Array | null): number {
  if (!a || !b || a.length !== b.length) return 0;
  // Four running sums: independent additions the CPU overlaps.
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < a.length; i += 4) {
    s0 += (a[i] as number) * (b[i] as number);
    s1 += (a[i + 1] as number) * (b[i + 1] as number);
    s2 += (a[i + 2] as number) * (b[i + 2] as number);
    s3 += (a[i + 3] as number) * (b[i + 3] as number);
  }
  for (; i < a.length; i++) s0 += (a[i] as number) * (b[i] as number);
  return s0 + s1 + s2 + s3;
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += (v[i] as number) * (v[i] as number);
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

/**
 * The local default: no network, no weights. A sparse random projection (count sketch, 4 signed
 * hashes per feature) of a bag of features: word stems, stem bigrams (within a line) and
 * character 3- and 4-grams of each word. Cosine between two such vectors approximates the cosine between their feature
 * bags, so it matches across inflections, compounds and misspellings where exact terms do not,
 * which is what it adds to BM25 in hybrid ranking (bench:search measures it).
 */
export class HashingEmbedding implements EmbeddingProvider {
  readonly name = 'local-hashing-v1';
  constructor(readonly dimensions = 256) {}

  private add(v: Float32Array, feature: string, weight: number): void {
    for (let k = 0; k < 4; k++) {
      const h = fnv1a(feature, k * 0x9e3779b1);
      v[h % this.dimensions] = (v[h % this.dimensions] as number) + (h & 0x80000000 ? -weight : weight);
    }
  }

  /**
   * `termWeight` (query side) scales each word's features, e.g. by the index's IDF, so that
   * the similarity works like tf-idf instead of plain tf.
   */
  embedOne(text: string, termWeight?: (stem: string) => number): Float32Array {
    const v = new Float32Array(this.dimensions);
    // feature -> [type weight, count]
    const counts = new Map<string, [number, number]>();
    const bump = (f: string, w: number) => {
      const e = counts.get(f);
      if (e) e[1] += 1;
      else counts.set(f, [w, 1]);
    };
    // A bigram pairs neighbours within a line: the last word of an item's name and the first of
    // its description (itemText puts each field on its own line) are no phrase.
    for (const line of text.split('\n')) {
      let prev: string | undefined;
      for (const w of words(line)) {
        if (STOP_WORDS.has(w)) {
          prev = undefined;
          continue;
        }
        const s = stem(w);
        const tw = termWeight ? termWeight(s) : 1;
        bump(`w:${s}`, tw);
        if (prev) bump(`b:${prev}_${s}`, 0.5 * tw);
        prev = s;
        const padded = `<${w}>`;
        for (const n of [3, 4]) for (let i = 0; i + n <= padded.length; i++) bump(`c:${padded.slice(i, i + n)}`, 0.25 * tw);
      }
    }
    // Sublinear term frequency, as in tf-idf weighting.
    for (const [f, [w, c]] of counts) this.add(v, f, w * (1 + Math.log(c)));
    return normalize(v);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }
}

/** The text an item is embedded from: name, description and metadata values, each on a line of its own. */
export function itemText(item: { name: string; description?: string; metadata: Record<string, unknown> }): string {
  const meta = Object.entries(item.metadata)
    .filter(([, v]) => typeof v === 'string' || typeof v === 'number')
    .map(([k, v]) => `${k} ${String(v)}`);
  return [item.name, item.description ?? '', ...meta].join('\n');
}
