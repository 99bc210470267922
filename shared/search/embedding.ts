import { stem, STOP_WORDS, tokens } from './text.ts';

/** Turns texts into unit vectors. Implementations: local hashing (default), Amazon Bedrock Titan. */
export interface EmbeddingProvider {
  readonly name: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
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
 * FNV-1a's 4 seeded states (the count sketch's 4 hashes, as int32) after `prefix`. `seed` picks
 * another realization of the sketch (0: the service's; bench:search `--seeds` measures others).
 */
function seeded(prefix: string, seed: number): Int32Array {
  const out = new Int32Array(4);
  for (let k = 0; k < 4; k++) {
    let h = (0x811c9dc5 ^ (k * 0x9e3779b1) ^ Math.imul(seed, 0x85ebca6b)) >>> 0;
    for (let i = 0; i < prefix.length; i++) h = Math.imul(h ^ prefix.charCodeAt(i), 0x01000193) >>> 0;
    out[k] = h;
  }
  return out;
}
const UNDERSCORE = 0x5f;
const WORD_START = 0x3c;
const WORD_END = 0x3e;
/** A feature bag's first sizes: a table at most half full holds 1,024 features (a text of about 70 words). */
const TABLE_SIZE = 2048;
const FEATURES = 256;

/**
 * The distinct features of one text, in their first occurrence's order, each with its 4 FNV-1a
 * hashes, the weight of its first occurrence and its count. The feature names (`w:${stem}`,
 * `b:${prev}_${stem}`, `c:${gram}`) are hashed a character at a time instead of built as strings,
 * and counted in an open-addressing table of their hashes instead of a Map by name: a long query
 * embeds in about a third of the time (docs/benchmarks.md). A feature is told by its 4 hashes
 * (128 bits), which are all that place it in the vector.
 */
class FeatureBag {
  /** Open addressing by the first hash: a feature's number + 1, 0 for an empty slot. */
  private table = new Int32Array(TABLE_SIZE);
  hashes = new Int32Array(4 * FEATURES);
  weights = new Float64Array(FEATURES);
  counts = new Float64Array(FEATURES);
  size = 0;
  private h0 = 0;
  private h1 = 0;
  private h2 = 0;
  private h3 = 0;

  /**
   * Empty for the next text. Bound: room for the features of the largest text since the last
   * reset; a table grown past 4 times its first size (a text of several thousand words) is let
   * go here, so that clearing it does not cost every later short text its size.
   */
  clear(): void {
    if (this.table.length > 4 * TABLE_SIZE) {
      this.table = new Int32Array(TABLE_SIZE);
      this.hashes = new Int32Array(4 * FEATURES);
      this.weights = new Float64Array(FEATURES);
      this.counts = new Float64Array(FEATURES);
    } else this.table.fill(0);
    this.size = 0;
  }

  begin(prefix: Int32Array): void {
    this.h0 = prefix[0] as number;
    this.h1 = prefix[1] as number;
    this.h2 = prefix[2] as number;
    this.h3 = prefix[3] as number;
  }

  char(code: number): void {
    this.h0 = Math.imul(this.h0 ^ code, 0x01000193);
    this.h1 = Math.imul(this.h1 ^ code, 0x01000193);
    this.h2 = Math.imul(this.h2 ^ code, 0x01000193);
    this.h3 = Math.imul(this.h3 ^ code, 0x01000193);
  }

  text(s: string): void {
    for (let i = 0; i < s.length; i++) this.char(s.charCodeAt(i));
  }

  /** Counts the feature hashed since `begin`, with `weight` if it is new. */
  end(weight: number): void {
    const { table, hashes, h0, h1, h2, h3 } = this;
    const mask = table.length - 1;
    for (let at = h0 & mask; ; at = (at + 1) & mask) {
      const f = (table[at] as number) - 1;
      if (f < 0) {
        const n = this.size++;
        table[at] = n + 1;
        this.store(n, weight);
        // At most half full.
        if (2 * this.size > table.length) this.rehash();
        return;
      }
      if (hashes[4 * f] === h0 && hashes[4 * f + 1] === h1 && hashes[4 * f + 2] === h2 && hashes[4 * f + 3] === h3) {
        this.counts[f] = (this.counts[f] as number) + 1;
        return;
      }
    }
  }

  private store(n: number, weight: number): void {
    if (n === this.weights.length) {
      const hashes = new Int32Array(this.hashes.length * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
      const weights = new Float64Array(this.weights.length * 2);
      weights.set(this.weights);
      this.weights = weights;
      const counts = new Float64Array(this.counts.length * 2);
      counts.set(this.counts);
      this.counts = counts;
    }
    this.hashes[4 * n] = this.h0;
    this.hashes[4 * n + 1] = this.h1;
    this.hashes[4 * n + 2] = this.h2;
    this.hashes[4 * n + 3] = this.h3;
    this.weights[n] = weight;
    this.counts[n] = 1;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let f = 0; f < this.size; f++) {
      let at = (this.hashes[4 * f] as number) & mask;
      while (table[at] !== 0) at = (at + 1) & mask;
      table[at] = f + 1;
    }
    this.table = table;
  }
}

/**
 * The words the local embedding is made of, in order: each line's words without stop words,
 * with the word's stem, its weight (`termWeight` of the stem, else 1) and the stem before it
 * that it pairs with in a bigram. A bigram pairs neighbours within a line (undefined at a line's
 * start or after a stop word): the last word of an item's name and the first of its description
 * (itemText puts each field on its own line) are no phrase.
 */
export function forEachEmbeddedWord(text: string, termWeight: ((stem: string) => number) | undefined, visit: (word: string, stem: string, weight: number, prev: string | undefined) => void): void {
  for (const line of text.split('\n')) {
    let prev: string | undefined;
    for (const w of tokens(line)) {
      if (STOP_WORDS.has(w)) {
        prev = undefined;
        continue;
      }
      const s = stem(w);
      visit(w, s, termWeight ? termWeight(s) : 1, prev);
      prev = s;
    }
  }
}

/**
 * The local default: no network, no weights. A sparse random projection (count sketch, 4 signed
 * hashes per feature) of a bag of features: word stems, stem bigrams (within a line) and
 * character 3- and 4-grams of each word. Cosine between two such vectors approximates the cosine
 * between their feature bags, so it matches across inflections, compounds and misspellings where
 * exact terms do not, which is what it adds to BM25 in hybrid ranking (bench:search measures it).
 */
export class HashingEmbedding implements EmbeddingProvider {
  readonly name: string;
  /** Scratch of `embedOne`, which runs to its end without yielding: one text at a time. */
  private readonly bag = new FeatureBag();
  /** The hashes' starting states for word stems, stem bigrams and character grams. */
  private readonly word: Int32Array;
  private readonly bigram: Int32Array;
  private readonly gram: Int32Array;
  /**
   * `seed`: which random realization of the sketch; the service always uses 0 (its stored
   * vectors are of that one). Others are for measuring how much a ranking's quality owes to the
   * one realization (bench:search `--in-process --seeds`).
   */
  constructor(
    readonly dimensions = 256,
    seed = 0,
  ) {
    this.name = seed === 0 ? 'local-hashing-v1' : `local-hashing-v1-seed-${seed}`;
    this.word = seeded('w:', seed);
    this.bigram = seeded('b:', seed);
    this.gram = seeded('c:', seed);
  }

  /**
   * `termWeight` (query side) scales each word's features, e.g. by the index's IDF, so that
   * the similarity works like tf-idf instead of plain tf.
   */
  embedOne(text: string, termWeight?: (stem: string) => number): Float32Array {
    const bag = this.bag;
    bag.clear();
    forEachEmbeddedWord(text, termWeight, (w, s, tw, prev) => {
      bag.begin(this.word);
      bag.text(s);
      bag.end(tw);
      if (prev) {
        bag.begin(this.bigram);
        bag.text(prev);
        bag.char(UNDERSCORE);
        bag.text(s);
        bag.end(0.5 * tw);
      }
      // The character 3- and 4-grams of the word between word marks: `<${w}>`.
      const last = w.length + 1;
      for (let n = 3; n <= 4; n++) {
        for (let i = 0; i + n <= last + 1; i++) {
          bag.begin(this.gram);
          for (let j = i; j < i + n; j++) bag.char(j === 0 ? WORD_START : j === last ? WORD_END : w.charCodeAt(j - 1));
          bag.end(0.25 * tw);
        }
      }
    });
    const v = new Float32Array(this.dimensions);
    const dims = this.dimensions;
    const mask = (dims & (dims - 1)) === 0 ? dims - 1 : -1;
    // Sublinear term frequency, as in tf-idf weighting.
    for (let f = 0; f < bag.size; f++) {
      const weight = (bag.weights[f] as number) * (1 + Math.log(bag.counts[f] as number));
      for (let k = 0; k < 4; k++) {
        const h = bag.hashes[4 * f + k] as number;
        const at = mask >= 0 ? h & mask : (h >>> 0) % dims;
        v[at] = (v[at] as number) + (h < 0 ? -weight : weight);
      }
    }
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
