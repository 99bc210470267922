import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BedrockRuntimeClient, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import type { Context, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { LocalQueue } from '../../local/queue.ts';
import { packIndex, unpackIndex, unpackIndexInTurns } from '../../shared/search/artifact.ts';
import { packSections, unpackSections } from '../../shared/sections.ts';
import { cosine, forEachEmbeddedWord, HashingEmbedding, itemText } from '../../shared/search/embedding.ts';
import { NO_FILTER, RANKING, SearchIndex, buildIndexParts, idfOf, type SearchDoc } from '../../shared/search/engine.ts';
import { generateCatalog } from '../../shared/demo/catalog.ts';
import { type Collection, SHAPES } from '../../bench/collections.ts';
import { DEMO_SIZES } from '../../shared/demo/generate.ts';
import { TopK } from '../../shared/top-k.ts';
import { type FieldNorms, type Postings, scorePostings } from '../../shared/search/bm25f.ts';
import { IntList } from '../../shared/search/int-list.ts';
import { addCounts, countOf, stopWordOpening } from '../../shared/search/analyze.ts';
import { addDocVectors } from '../../shared/search/vectors.ts';
import { BedrockTitanEmbedding, TITAN_V2 } from '../../shared/search/providers.ts';
import { PreparedDelta, rank, tasteBoost } from '../../shared/search/rank.ts';
import { profileOf } from '../../shared/search/profiles.ts';
import { coarseDimsOf, nearestOf } from '../../shared/search/nearest.ts';
import { IVF_MIN } from '../../shared/search/ivf.ts';
import { Int8Rows, type Similarities, type VectorRow } from '../../shared/search/int8-vectors.ts';
import { normalize } from '../../shared/search/embedding.ts';
import { seededRandom } from '../../shared/random.ts';
import { indexStatus } from '../../shared/search/status.ts';
import { SEARCH_SETTINGS } from '../../shared/search/settings.ts';
import { setClock } from '../../shared/clock.ts';
import type { ChangeKey, EventStore, ItemStore, RecentEvent } from '../../shared/domain/types.ts';
import type { BlobStore } from '../../shared/blob.ts';
import { editDistance, REQUEST_WORDS, terms, withoutRequestWords } from '../../shared/search/text.ts';
import { analysedTerms, analyze } from '../../shared/search/analyze.ts';
import { sqsWorker } from '../../shared/queue/sqs-worker.ts';
import { searchDoc, turnsDuring } from '../helpers/fixtures.ts';

const emb = new HashingEmbedding(64);
const doc = (id: number, name: string, description = '', over: Partial<SearchDoc> = {}): SearchDoc => searchDoc((t) => emb.embedOne(t), id, name, description, over);
const noDelta = new PreparedDelta({ docs: [], masked: new Set() });
const run = (index: SearchIndex, query: string, mode: 'keyword' | 'semantic' | 'hybrid' = 'keyword', delta = noDelta) =>
  rank(index, delta, { query, mode, filter: () => true, queryVector: emb.embedOne(query), profile: null }, { limit: 1000 }).hits.map((h) => h.doc.id);

/** A top-k's keys (as ids, through `idOf`) and scores, best first. */
const bestOf = (top: TopK, idOf: (key: number) => number): [number, number][] => {
  const out: [number, number][] = [];
  top.forEachBest((key, score) => out.push([idOf(key), score]));
  return out;
};

/** A delta's k nearest to q and a build's of the same items: the same ids, the same scores. */
const neighboursAlike = (delta: PreparedDelta, built: SearchIndex, q: Float32Array, k: number) =>
  expect(
    bestOf(
      delta.nearest(q, k, () => true),
      (s) => delta.docAt(s).id,
    ),
  ).toEqual(
    bestOf(
      built.nearest(q, k, () => true),
      (i) => (built.docs[i] as SearchDoc).id,
    ),
  );

/** One-row similarities as the batch form nearestOf takes (the reference the batched kernel calls are held to). */
const oneAtATime =
  (sim: (key: number) => number): Similarities =>
  (keys, count, out) => {
    for (let j = 0; j < count; j++) out[j] = sim(keys[j] as number);
  };

describe('text analysis', () => {
  it('folds, drops stop words and stems', () => {
    expect(terms('The Running Shoes of Zürich')).toEqual(['run', 'shoe', 'zurich']);
    expect(editDistance('sheo', 'shoe', 2)).toBe(1);
    expect(editDistance('sheo', 'shoe', 0)).toBe(1);
    expect(editDistance('abcdef', 'badcfe', 3)).toBe(3);
    expect(editDistance('abcdef', 'badcfe', 2)).toBe(3);
    expect(editDistance('abc', 'abd', 1)).toBe(1);
    expect(editDistance('abcdef', 'a', 1)).toBe(2);
  });

  it('reads the stop word a name begins with from its first piece that holds a word', () => {
    expect(stopWordOpening('The Who')).toBe('the');
    expect(stopWordOpening('  the  who')).toBe('the');
    expect(stopWordOpening('Up (2009)')).toBe('up');
    expect(stopWordOpening('— It Follows')).toBe('it');
    expect(stopWordOpening("it's a wonderful life")).toBe('it');
    expect(stopWordOpening('À bout de souffle')).toBe('a');
    expect(stopWordOpening('(500) Days of Summer')).toBeUndefined();
    expect(stopWordOpening('theater kit')).toBeUndefined();
    expect(stopWordOpening('sofa')).toBeUndefined();
    expect(stopWordOpening('')).toBeUndefined();
    expect(stopWordOpening('- - - - - - - - the end')).toBeUndefined();
    expect(stopWordOpening('- - - - - - - the end')).toBe('the');
    // Leading spaces count as a first, empty piece.
    expect(stopWordOpening(' - - - - - - - the end')).toBeUndefined();
    expect(stopWordOpening(' - - - - - - the end')).toBe('the');
    // Called again after a name with more pieces: each call reads its own name from the start.
    expect(stopWordOpening('premium tanix table dre')).toBeUndefined();
    expect(stopWordOpening('THE END')).toBe('the');
  });
});

describe("a document's analysed terms (term feedback reads them)", () => {
  const asTf = (d: SearchDoc) => {
    const { terms: ts, tf } = analysedTerms(d);
    return new Map(ts.map((t, i) => [t, [tf[3 * i], tf[3 * i + 1], tf[3 * i + 2]]]));
  };

  it('are analyze’s term frequencies per field, kept per document object', () => {
    const d = doc(1, 'Running shoes', 'Shoes for running on trails; trail shoes.', { metadata: { brand: 'Trail Co' } });
    expect(asTf(d)).toEqual(analyze(d).tf);
    expect(analysedTerms(d)).toBe(analysedTerms(d));
    // A changed item is a new document: its own terms, not the ones kept for the old one.
    const changed = { ...d, description: 'Boots for hiking.', metadata: {} };
    expect(asTf(changed)).toEqual(analyze(changed).tf);
    expect(asTf(changed).has('trail')).toBe(false);
    expect(asTf(d).get('trail')).toEqual([0, 2, 1]);
  });

  it('keeps the documents asked for last, up to 262,144 terms in all, the oldest dropped first', () => {
    // 4,096 terms each (numbers stem to themselves): 64 documents fill the cache.
    const numbers = Array.from({ length: 4096 }, (_, i) => String(i)).join(' ');
    const big = (id: number) => doc(id, '0', numbers);
    const first = big(1);
    const kept = analysedTerms(first);
    expect(kept.terms).toHaveLength(4096);
    for (let i = 2; i <= 64; i++) analysedTerms(big(i));
    expect(analysedTerms(first)).toBe(kept); // still kept, and now the newest
    analysedTerms(big(65)); // drops the oldest, which is document 2
    expect(analysedTerms(first)).toBe(kept);
    for (let i = 66; i <= 129; i++) analysedTerms(big(i));
    const again = analysedTerms(first);
    expect(again).not.toBe(kept);
    expect(again).toEqual(kept);
  });
});

describe('hashing embedding', () => {
  it('is deterministic, unit length, and closer for related texts', async () => {
    const [a, b, c] = await emb.embed(['red running shoes', 'running shoe in red', 'quarterly tax report']);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * (y[i] as number), 0);
    expect(dot(a as Float32Array, a as Float32Array)).toBeCloseTo(1, 5);
    expect(emb.embedOne('red running shoes')).toEqual(a);
    expect(dot(a as Float32Array, b as Float32Array)).toBeGreaterThan(dot(a as Float32Array, c as Float32Array) + 0.3);
  });

  it('is the count sketch of the named features, bit for bit, at any size of vector and for any text', () => {
    // The features by name (of the same words), hashed by name, counted in a Map: the definition
    // embedOne computes from its features' hashes alone.
    const fnv1a = (s: string, seed: number) => {
      let h = (0x811c9dc5 ^ seed) >>> 0;
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
      return h;
    };
    const byName = (dims: number, text: string, termWeight?: (stem: string) => number, seed = 0) => {
      const counts = new Map<string, [number, number]>();
      const bump = (f: string, w: number) => {
        const e = counts.get(f);
        if (e) e[1] += 1;
        else counts.set(f, [w, 1]);
      };
      forEachEmbeddedWord(text, termWeight, (w, s, tw, prev) => {
        bump(`w:${s}`, tw);
        if (prev) bump(`b:${prev}_${s}`, 0.5 * tw);
        const padded = `<${w}>`;
        for (const n of [3, 4]) for (let i = 0; i + n <= padded.length; i++) bump(`c:${padded.slice(i, i + n)}`, 0.25 * tw);
      });
      const v = new Float32Array(dims);
      for (const [f, [w, c]] of counts) {
        const weight = w * (1 + Math.log(c));
        for (let k = 0; k < 4; k++) {
          const h = fnv1a(f, (k * 0x9e3779b1) ^ Math.imul(seed, 0x85ebca6b));
          v[h % dims] = (v[h % dims] as number) + (h & 0x80000000 ? -weight : weight);
        }
      }
      return normalize(v);
    };
    const random = seededRandom(5);
    const vocabulary = ['shoe', 'shoes', 'running', 'run', 'trail', 'a', 'x9', 'Zürich', 'ＤＩＳＣＵＳＳ', 'naïve', '東京', '𝔘nicode', 'the', 'of', 'ab'];
    // Enough repeated features to outgrow the first tables, and texts with no feature at all.
    const texts: string[] = [
      '',
      'the of',
      ...Array.from({ length: 40 }, (_, i) =>
        Array.from(
          { length: 1 + Math.floor(random() * 40 * (1 + (i % 5) * 10)) },
          () => vocabulary[Math.floor(random() * vocabulary.length)] + (random() < 0.3 ? String(Math.floor(random() * 500)) : ''),
        ).join(random() < 0.1 ? '\n' : ' '),
      ),
    ];
    // One of thousands of distinct words (its bag grows past the size it is let go at), then short ones.
    texts.push(Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}q${(i * 7919).toString(36)}`).join(' '), 'trail shoe', 'shoe');
    const idf = (t: string) => 1 + (t.length % 7) / 3;
    for (const dims of [64, 100, 512]) {
      const e = new HashingEmbedding(dims);
      for (const t of texts) {
        expect(Buffer.from(e.embedOne(t).buffer)).toEqual(Buffer.from(byName(dims, t).buffer));
        expect(Buffer.from(e.embedOne(t, idf).buffer)).toEqual(Buffer.from(byName(dims, t, idf).buffer));
      }
    }
    // Another seed is another realization of the same sketch (its hashes start elsewhere); seed 0 is the default's.
    for (const seed of [0, 7]) {
      const e = new HashingEmbedding(100, seed);
      for (const t of texts.slice(0, 12)) expect(Buffer.from(e.embedOne(t, idf).buffer)).toEqual(Buffer.from(byName(100, t, idf, seed).buffer));
    }
  });

  it('has other realizations (seeds), for measuring what a ranking owes to the one the service uses', () => {
    const zero = new HashingEmbedding(512);
    const one = new HashingEmbedding(512, 1);
    expect(new HashingEmbedding(512, 0).embedOne('red running shoes')).toEqual(zero.embedOne('red running shoes'));
    expect(one.embedOne('red running shoes')).not.toEqual(zero.embedOne('red running shoes'));
    expect([zero.name, one.name]).toEqual(['local-hashing-v1', 'local-hashing-v1-seed-1']);
    // Each realization keeps what the sketch is for: related texts closer than unrelated ones.
    for (const e of [zero, one])
      expect(cosine(e.embedOne('red running shoes'), e.embedOne('running shoe in red'))).toBeGreaterThan(cosine(e.embedOne('red running shoes'), e.embedOne('quarterly tax report')) + 0.3);
  });

  it("pairs words into bigrams within a field, not across an item's fields", () => {
    const wide = new HashingEmbedding(4096);
    const item = { name: 'Trail runner', description: 'Shoe cleaning kit', metadata: { brand: 'Acme', colour: 'red' } };
    expect(itemText(item)).toBe('Trail runner\nShoe cleaning kit\nbrand Acme\ncolour red');
    // The same features as the words with a stop word between the fields (it ends a bigram, and
    // has no features of its own): no bigram runner_shoe, kit_brand or acme_colour...
    const together = wide.embedOne(itemText(item));
    expect(together).toEqual(wide.embedOne('Trail runner the Shoe cleaning kit the brand Acme the colour red'));
    // ...so a query of the two words across the fields matches it less than a name holding them side by side.
    expect(cosine(wide.embedOne('runner shoe'), together)).toBeLessThan(cosine(wide.embedOne('runner shoe'), wide.embedOne('Trail runner shoe cleaning kit')));
  });
});

describe('index and ranking', () => {
  const docs = [
    doc(1, 'Trail running shoe', 'light shoe for rough ground'),
    doc(2, 'Road running shoe', 'cushioned'),
    doc(3, 'Rain jacket', 'waterproof shell'),
    doc(4, 'Sleeping bag', 'down filled', { active: false }),
  ];
  const index = SearchIndex.build(docs, 64, 100);

  it('ranks by BM25F with the name boosted and leaves out inactive documents', () => {
    expect(run(index, 'trail shoe')[0]).toBe(1);
    expect(run(index, 'sleeping bag')).toEqual([]);
  });

  it('expands typos and the last word as a prefix', () => {
    expect(run(index, 'jaket')).toEqual([3]);
    expect(run(index, 'waterp')).toEqual([3]);
    expect(run(index, 'j')).toEqual([3]);
    // Two letters swapped are one edit.
    expect(run(index, 'jakcet')).toEqual([3]);
    expect(run(index, 'sleeipng')).toEqual([]);
    // A half-typed word past its stem: "runni" starts "running" (stem "run"), "sleepi" "sleeping".
    expect(new Set(run(index, 'runni'))).toEqual(new Set([1, 2]));
    expect(run(index, 'trail runni')[0]).toBe(1);
    expect(run(index, 'cushione')).toEqual([2]);
  });

  it('judges a typo on the word as typed, not only on its stem', () => {
    // "pgrty" is one letter from "party" and two from its stem (parti); "estaitc" one swap from
    // "estatic" and two edits from its stem (estat); "jsese" one swap from "jesse" (stem jess).
    const idx = SearchIndex.build([doc(1, 'Party Ben'), doc(2, 'Estatic Fear'), doc(3, 'Jesse Cook'), doc(4, 'Pgr')], 64, 1);
    expect(run(idx, 'pgrty ben ')).toEqual([1]);
    expect(run(idx, 'pgrty ')).toEqual([1]);
    expect(run(idx, 'estaitc fear ')).toEqual([2]);
    expect(run(idx, 'jsese ')).toEqual([3]);
    // The same when the items are in the delta (searchable before a build), and with both.
    const items = [doc(1, 'Party Ben'), doc(2, 'Estatic Fear'), doc(3, 'Jesse Cook'), doc(4, 'Pgr')];
    const empty = SearchIndex.build([], 64, 1);
    const delta = new PreparedDelta({ docs: items, masked: new Set() });
    for (const q of ['pgrty ', 'estaitc fear ', 'jsese ']) expect(run(empty, q, 'keyword', delta), q).toEqual(run(idx, q));
  });

  it('takes a typo in the first letter as two: for a word of 8+ letters, when nothing shares its first letter', () => {
    const items = [doc(1, 'Telescope mount'), doc(2, 'Keyboard stand'), doc(3, 'Waterproof jacket'), doc(4, 'Hatchback cover')];
    const idx = SearchIndex.build(items, 64, 1);
    // Another first letter, one put before it, it left out, it swapped with the second.
    expect(run(idx, 'felescope ')).toEqual([1]);
    expect(run(idx, 'akeyboard ')).toEqual([2]);
    expect(run(idx, 'aterproof ')).toEqual([3]);
    expect(run(idx, 'ahtchback ')).toEqual([4]);
    // Under 8 letters a word has one edit, which a first letter's exceeds.
    expect(run(idx, 'facket ')).toEqual([]);
    // Nor with a second edit.
    expect(run(idx, 'felescopa ')).toEqual([]);
    // A candidate with the same first letter is taken instead ("telescape" is one edit from it).
    const both = SearchIndex.build([doc(1, 'Telescape'), doc(2, 'Kelescope')], 64, 1);
    expect(run(both, 'kelescape ')).toEqual([2]);
    // With no candidate of its first letter, the first-letter typo is found ("kelescope" is two edits more).
    expect(run(both, 'gelescape ')).toEqual([1]);
    // The same in the delta.
    const delta = new PreparedDelta({ docs: items, masked: new Set() });
    const empty = SearchIndex.build([], 64, 1);
    for (const q of ['felescope ', 'akeyboard ', 'aterproof ', 'ahtchback ', 'facket ']) expect(run(empty, q, 'keyword', delta), q).toEqual(run(idx, q));
    // Letters above U+3000 that are no Chinese, Japanese or Korean (Cherokee's lower case).
    const cherokee = SearchIndex.build([doc(1, 'ᏣᎳᎩᎯᏍᏗᎢᏗᏍᎩ'), doc(2, 'Telescope mount')], 64, 1);
    expect(run(cherokee, `Ꭰ${'ᏣᎳᎩᎯᏍᏗᎢᏗᏍᎩ'.slice(1)} `)).toEqual([1]);
  });

  it('looks up a first-letter typo among the nearest first letters only, however many a catalog has', () => {
    // A second review's find: 3,781 first letters made a query of 8 invented words cost 100-400 x.
    const letters = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x400 + i)).filter((c) => /^\p{L}$/u.test(c) && terms(`${c}abcdefgh`).length === 1);
    const idx = SearchIndex.build(
      letters.map((c, i) => doc(i + 1, `${c}abcdefgh`)),
      64,
      1,
    );
    expect(letters.length).toBeGreaterThan(1000);
    const before = idx.typoWork;
    idx.expand('qzqzqzqzq rzrzrzrzr szszszszs tztztztzt ');
    // Per word: 2 exact look-ups, then 2 and a jump per first letter, 64 letters at most (all
    // 3,000 would be about 4 x 3 x 1,300).
    expect(idx.typoWork - before).toBeLessThan(2000);
  });

  it('takes an unknown half-typed word for the terms it starts within a typo, below its exact completions', () => {
    const idx = SearchIndex.build([doc(1, 'Jackal plush'), doc(2, 'Rain jacket'), doc(3, 'Waterproof boots')], 64, 1);
    // "jakc" starts neither, but is one swap from "jack", which starts both.
    expect(new Set(run(idx, 'jakc'))).toEqual(new Set([1, 2]));
    // "jacke" starts "jacket"; "jackal" starts with "jack", one edit away: it comes after.
    expect(run(idx, 'jacke')).toEqual([2, 1]);
    expect(run(idx, 'watrepr')).toEqual([3]);
    // Not the last word as typed (a space after it), or three letters: no completions.
    expect(run(idx, 'jakc ')).toEqual([]);
    expect(run(idx, 'jkc')).toEqual([]);
  });

  it('expands a half-typed word to the 30 terms it starts that most documents hold, ties by term', () => {
    // 40 terms starting "qu", held by 1 to 5 documents (8 terms each): the 30 most frequent take
    // every term held by 3 or more and the first 6 (in term order) of those held by 2.
    const term = (j: number) => `qu${String.fromCharCode(97 + (j % 26))}${String.fromCharCode(97 + Math.floor(j / 26))}k`;
    const df = (j: number) => 1 + (j % 5);
    const all = Array.from({ length: 40 }, (_, j) => j);
    const many = SearchIndex.build(
      [1, 2, 3, 4, 5].map((d) =>
        doc(
          d,
          all
            .filter((j) => df(j) >= d)
            .map(term)
            .join(' '),
        ),
      ),
      64,
      100,
    );
    const expected = all
      .sort((a, b) => df(b) - df(a) || (term(a) < term(b) ? -1 : 1))
      .slice(0, 30)
      .map(term);
    expect([...many.expand('qu').standsFor.keys()].sort()).toEqual(expected.sort());
  });

  it('adds up the best of each word and its expansions when two words of a query are expanded', () => {
    const scores = (query: string) =>
      new Map(rank(index, noDelta, { query, mode: 'keyword', filter: () => true, queryVector: null, profile: null }, { limit: 1000 }).hits.map((h) => [h.doc.id, h.score]));
    // "jaket" is a typo (of jacket) and "waterp" half typed (waterproof): each word with its
    // expansions is one unit of the sum. The first unit is kept straight in the accumulator, a
    // second one in scratch memory first: both paths, in one query.
    const both = scores('jaket waterp');
    const typo = scores('jaket.');
    const prefix = scores('waterp');
    expect([...both.keys()]).toEqual([3]);
    // Keyword scores add up in single precision (as Lucene's): the sum rounded to a float32.
    expect(both.get(3)).toBe(Math.fround((typo.get(3) as number) + (prefix.get(3) as number)));
    // A word matched by none of its expansions in a document adds nothing there.
    expect(scores('jaket runni').get(3)).toBe(typo.get(3));
    expect(scores('jaket runni').get(1)).toBe(scores('runni').get(1));
    // Two expansions of one word in one document: the better one counts, not their sum (a half-typed
    // word's expansions weigh RANKING.prefixWeight of a whole word's); "hatt wat" has two expanded
    // words (a typo of hat first), so "wat" goes the second way.
    const bottles = SearchIndex.build([doc(1, 'Water bottle', 'waterproof lid'), doc(2, 'Waterproof shell'), doc(3, 'Rain hat')], 64, 100);
    const in2 = (query: string) =>
      new Map(rank(bottles, noDelta, { query, mode: 'keyword', filter: () => true, queryVector: null, profile: null }, { limit: 1000 }).hits.map((h) => [h.doc.id, h.score]));
    // Keyword scores alone: "water" is also the beginning of 1's name, which names first would add to.
    const pool = RANKING.names.pool;
    try {
      RANKING.names.pool = 0;
      const water = in2('water.').get(1) as number;
      const waterproof = in2('waterproof.').get(1) as number;
      for (const query of ['wat', 'rain wat', 'hatt wat']) {
        const got = in2(query).get(1) as number;
        expect(got, query).toBeCloseTo(RANKING.prefixWeight * Math.max(water, waterproof), 12);
      }
    } finally {
      RANKING.names.pool = pool;
    }
  });

  it('matches a half-typed word past its stem in the delta too, and forgets the words of a replaced document', () => {
    const delta = new PreparedDelta({ docs: [doc(6, 'Hiking poles'), doc(7, 'Hiking boots')], masked: new Set() });
    expect(new Set(run(index, 'hikin', 'keyword', delta))).toEqual(new Set([6, 7]));
    delta.apply([doc(6, 'Walking poles', '', { updated_at: 2 })], []);
    expect(run(index, 'hikin', 'keyword', delta)).toEqual([7]);
    expect(run(index, 'walki', 'keyword', delta)).toEqual([6]);
    delta.apply([], [7]);
    expect(run(index, 'hikin', 'keyword', delta)).toEqual([]);
    expect(delta.surfaces.has('hiking')).toBe(false);
  });

  it('serves a delta on top: new documents, masked ones gone', () => {
    const delta = new PreparedDelta({ docs: [doc(5, 'Trail running socks')], masked: new Set([1, 5]) });
    const hits = run(index, 'trail', 'keyword', delta);
    expect(hits).toEqual([5]);
  });

  it('leaves inactive documents of the delta out, unless asked for (the Platform item search), and replaced ones of the build', () => {
    const delta = new PreparedDelta(
      { docs: [doc(5, 'Trail running socks', '', { active: false }), doc(6, 'Trail map'), doc(2, 'Trail shoe, road edition', '', { updated_at: 2, active: false })], masked: new Set() },
      index,
    );
    const ids = (mode: 'keyword' | 'hybrid', includeInactive: boolean) =>
      new Set(rank(index, delta, { query: 'trail', mode, filter: NO_FILTER, queryVector: emb.embedOne('trail'), profile: null, includeInactive }, { limit: 1000 }).hits.map((h) => h.doc.id));
    for (const mode of ['keyword', 'hybrid'] as const) {
      expect(ids(mode, false), mode).toEqual(new Set([1, 6]));
      expect(ids(mode, true), mode).toEqual(new Set([1, 2, 5, 6]));
    }
  });

  it("lets go of a delta document's float vector once its int8 row holds it, and keeps the row through a rebind and a renumbering of the slots", () => {
    const r = seededRandom(11);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const many = Array.from({ length: 1500 }, (_, i) => doc(20_000 + i, `item ${i}`, '', { vector: i === 3 ? new Float32Array(3).fill(1) : unit() }));
    const built = SearchIndex.build(many, 64, 1);
    // Made before any build is bound (the floats kept until then), then bound to one.
    const delta = new PreparedDelta({ docs: many, masked: new Set() });
    delta.bind(index);
    const held = (i: number) => delta.get((many[i] as SearchDoc).id) as SearchDoc;
    const q = unit();
    const sims = () => many.map((d) => delta.similarityTo(q)(delta.slotCount - many.length + many.indexOf(d)));
    const expected = many.map((_, i) => built.similarityTo(q)(i));
    expect(sims()).toEqual(expected);
    // Let go: the document still has a vector (not null), none of its float values.
    expect(held(0).vector).not.toBeNull();
    expect(held(0).vector).toHaveLength(0);
    expect(held(0).vector).not.toBe((many[0] as SearchDoc).vector);
    // A vector of another width is none in the rows, and kept as it came.
    expect(held(3).vector).toBe((many[3] as SearchDoc).vector);
    // Bound to another build of the same width: the same rows.
    delta.bind(SearchIndex.build([], 64, 2));
    expect(sims()).toEqual(expected);
    expect(delta.vectorRowOf(held(7))?.scale).toBe(built.vectorRow(7)?.scale);
    // Every document but the last 200 replaced twice by one without a vector: more dead slots
    // than live ones, so the slots are renumbered, the last 200 keeping their rows in new slots.
    for (const at of [2, 3]) {
      delta.apply(
        many.slice(0, 1300).map((d) => ({ ...d, updated_at: at, vector: null })),
        [],
      );
    }
    expect(delta.slotCount).toBe(1500);
    expect(delta.docAt(0).id).toBe((many[1300] as SearchDoc).id);
    for (let i = 1300; i < 1500; i++) {
      const s = [...Array(delta.slotCount).keys()].find((k) => delta.docAt(k).id === (many[i] as SearchDoc).id) as number;
      expect(delta.similarityTo(q)(s)).toBe(expected[i]);
    }
  });

  it('keeps the rows of a width through a build of another width and back, slots renumbered meanwhile, as a delta of the floats would have them', () => {
    const r = seededRandom(13);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const first = Array.from({ length: 300 }, (_, i) => doc(30_000 + i, `item ${i}`, '', { vector: unit() }));
    const delta = new PreparedDelta({ docs: first, masked: new Set() }, SearchIndex.build([], 64, 1));
    delta.bind(SearchIndex.build([], 32, 2));
    // Bound to the other width, 200 of them replaced six times (their vectors, of the first width,
    // kept as floats): more dead slots than the bound, so the slots are renumbered.
    let current = first;
    for (let round = 1; round <= 6; round++) {
      current = current.map((d, i) => (i < 200 ? { ...d, updated_at: round + 1, vector: unit() } : d));
      delta.apply(current.slice(0, 200), []);
    }
    expect(delta.slotCount).toBeLessThan(1300);
    const back = SearchIndex.build([], 64, 3);
    delta.bind(back);
    const fresh = new PreparedDelta({ docs: current, masked: new Set() }, back);
    const q = unit();
    const sims = (d: PreparedDelta) => current.map((x) => d.similarityTo(q)([...Array(d.slotCount).keys()].find((s) => d.live[s] === 1 && d.docAt(s).id === x.id) as number));
    expect(sims(delta)).toEqual(sims(fresh));
    expect(sims(delta).every((x) => x !== 0)).toBe(true);
  });

  it("scores a large delta's coarse pass from rows of its own, to the same sums, and finds an item's own vector first", () => {
    // Over 10,000 slots a nearest-neighbour search scans the delta coarsely first (nearestOf).
    const r = seededRandom(7);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const many = Array.from({ length: 12_000 }, (_, i) => doc(10_000 + i, `item ${i}`, '', { vector: unit() }));
    const delta = new PreparedDelta({ docs: many, masked: new Set() }, index);
    const coarse = coarseDimsOf(64);
    const q = unit();
    const sim = delta.similarityTo(q);
    for (const slot of [0, 1, 1023, 1024, 5000, 11_999]) {
      const row = delta.vectorRowOf(delta.get((many[slot] as SearchDoc).id) as SearchDoc) as VectorRow;
      // The kernel over the first `coarse` values of the item's full row: what the coarse pass scored before it had rows of its own.
      expect(sim(slot, coarse)).toBe(row.rows.query(q)(row.row, coarse) * row.scale);
      expect(sim(slot)).toBe(row.rows.query(q)(row.row) * row.scale);
    }
    const target = many[4321] as SearchDoc;
    const found = delta.nearest(target.vector as Float32Array, 10, () => true);
    expect(found.bestKeys()[0]).toBe(4321);
    // The coarse pass scores a block's rows in one kernel call: the same neighbours and scores
    // as a coarse pass slot by slot, whatever is accepted.
    for (const accept of [() => true, (s: number) => s % 3 !== 0]) {
      const bySlot = nearestOf(
        many.length,
        64,
        50,
        (n, top) => {
          for (let s = 0; s < many.length; s++) if (accept(s)) top.push(s, sim(s, n));
        },
        oneAtATime(sim),
      );
      const best = (top: TopK) => {
        const out: [number, number][] = [];
        top.forEachBest((key, score) => out.push([key, score]));
        return out;
      };
      expect(best(delta.nearest(q, 50, accept))).toEqual(best(bySlot));
    }
  });

  it("trains a large delta's inverted file in turns when asked (a read of the changes does), other work served meanwhile: the same one as at once", async () => {
    const r = seededRandom(6);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const many = Array.from({ length: IVF_MIN + 300 }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: unit() }));
    const empty = SearchIndex.build([], 64, 1);
    const atOnce = new PreparedDelta(undefined, empty);
    atOnce.apply(many, []);
    const inTurns = new PreparedDelta(undefined, empty);
    inTurns.apply(many, [], true);
    const { turns } = await turnsDuring(() => inTurns.keepIvfInTurns());
    expect(turns).toBeGreaterThan(5);
    const nearestOf = (delta: PreparedDelta, q: Float32Array, k: number, accept: (id: number) => boolean) =>
      bestOf(
        delta.nearest(q, k, (s) => accept(delta.docAt(s).id)),
        (s) => delta.docAt(s).id,
      );
    for (let t = 0; t < 4; t++) {
      const q = unit();
      for (const [k, accept] of [
        [10, () => true],
        [8, (id: number) => id % 997 === 0],
      ] as const) {
        const expected = nearestOf(atOnce, q, k, accept);
        expect(expected).toHaveLength(k);
        expect(nearestOf(inTurns, q, k, accept)).toEqual(expected);
      }
    }
  });

  it("finds a large delta's nearest neighbours through an inverted file of its own, trained as a build's: the same as a build of the same items", () => {
    // From IVF_MIN vectors a delta (right after an import) probes the lists closest to the query,
    // as a build does, instead of reading every vector; trained on the same vectors in the same
    // order, its lists are the build's, so are the neighbours and their scores.
    const r = seededRandom(5);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const many = Array.from({ length: IVF_MIN + 500 }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: i % 101 === 7 ? null : unit() }));
    const built = SearchIndex.build(many, 64, 1);
    expect(built.parts.ivf).not.toBeNull();
    const delta = new PreparedDelta({ docs: many, masked: new Set() }, SearchIndex.build([], 64, 1));
    const fromBuild = (q: Float32Array, k: number, accept: (id: number) => boolean) =>
      bestOf(
        built.nearest(q, k, (i) => accept((built.docs[i] as SearchDoc).id)),
        (i) => (built.docs[i] as SearchDoc).id,
      );
    const fromDelta = (q: Float32Array, k: number, accept: (id: number) => boolean) =>
      bestOf(
        delta.nearest(q, k, (s) => accept(delta.docAt(s).id)),
        (s) => delta.docAt(s).id,
      );
    // Unfiltered, a filter most pass, and one so rare that the search reads lists past those it probes.
    const filters: [number, (id: number) => boolean][] = [
      [10, () => true],
      [30, (id) => id % 3 === 0],
      [8, (id) => id % 997 === 0],
    ];
    for (let t = 0; t < 4; t++) {
      const q = unit();
      for (const [k, accept] of filters) {
        const expected = fromBuild(q, k, accept);
        expect(expected).toHaveLength(k);
        expect(fromDelta(q, k, accept)).toEqual(expected);
      }
    }
    // Not every vector read: an item's own vector finds it first, and its list is not all of them.
    const target = many[4321] as SearchDoc;
    expect(fromDelta(target.vector as Float32Array, 5, () => true)[0]?.[0]).toBe(target.id);
    // Changed after the lists were made: a new item is listed as it comes (found by its own
    // vector), a replaced version's vector is no longer found, a deleted item neither.
    const fresh = doc(50_000, 'fresh item', '', { vector: unit() });
    const moved = { ...(many[100] as SearchDoc), updated_at: 2, vector: unit() };
    delta.apply([fresh, moved], [many[200]?.id as number]);
    expect(fromDelta(fresh.vector as Float32Array, 3, () => true)[0]?.[0]).toBe(50_000);
    expect(fromDelta(moved.vector as Float32Array, 3, () => true)[0]?.[0]).toBe(moved.id);
    expect(fromDelta(many[100]?.vector as Float32Array, 50, () => true).map(([id]) => id)).not.toContain(moved.id);
    expect(fromDelta(many[200]?.vector as Float32Array, 50, () => true).map(([id]) => id)).not.toContain(many[200]?.id);
  });

  it('trains the inverted file of a large delta again once its vectors have doubled: the same neighbours as a build of them all', () => {
    const r = seededRandom(6);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const all = Array.from({ length: 2 * IVF_MIN + 10 }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: unit() }));
    const delta = new PreparedDelta({ docs: all.slice(0, IVF_MIN), masked: new Set() }, SearchIndex.build([], 64, 1));
    // Changes that come in after the first training (those past IVF_MIN), in two reads.
    delta.apply(all.slice(IVF_MIN, IVF_MIN + 5_000), []);
    delta.apply(all.slice(IVF_MIN + 5_000), []);
    const built = SearchIndex.build(all, 64, 1);
    for (let t = 0; t < 3; t++) {
      const q = unit();
      neighboursAlike(delta, built, q, 10);
    }
  });

  it('trains the inverted file of a large delta again once as many vectors came since as it was trained on (every item replaced): the same neighbours as a build of the latest versions', () => {
    const r = seededRandom(9);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const first = Array.from({ length: IVF_MIN + 100 }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: unit() }));
    const delta = new PreparedDelta({ docs: first, masked: new Set() }, SearchIndex.build([], 64, 1));
    // A new version of every item, in two reads (the vectors never double).
    const latest = first.map((d) => ({ ...d, updated_at: 2, vector: unit() }));
    delta.apply(latest.slice(0, 10_000), []);
    delta.apply(latest.slice(10_000), []);
    const built = SearchIndex.build(latest, 64, 1);
    for (let t = 0; t < 3; t++) neighboursAlike(delta, built, unit(), 10);
  });

  it("lists only a large delta's live slots with a vector in its inverted file, through replacements and deletions, and takes a vector holding NaN for none, as a build does", () => {
    const r = seededRandom(8);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    // Every 500th vector holds a NaN: no vector (a build's `hasVector` is 0 for it).
    const nan = (v: Float32Array) => {
      v[3] = Number.NaN;
      return v;
    };
    const many = Array.from({ length: IVF_MIN + 300 }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: i % 500 === 0 ? nan(unit()) : unit() }));
    const built = SearchIndex.build(many, 64, 1);
    const delta = new PreparedDelta({ docs: many, masked: new Set() }, SearchIndex.build([], 64, 1));
    const listed = () => {
      const lists = (delta as unknown as { vectors: { ivf: { lists: number[][] } | null } }).vectors.ivf?.lists ?? [];
      return lists.flat().sort((a, b) => a - b);
    };
    const liveWithVector = () => {
      const out: number[] = [];
      for (let s = 0; s < delta.slotCount; s++) if (delta.live[s] === 1 && delta.vectorRowOf(delta.docAt(s))) out.push(s);
      return out;
    };
    expect(listed()).toEqual(liveWithVector());
    expect(liveWithVector()).toHaveLength(built.parts.hasVector.reduce((a, x) => a + x, 0));
    for (let t = 0; t < 3; t++) {
      const q = unit();
      neighboursAlike(delta, built, q, 10);
    }
    // Replaced (a new vector, or none) and deleted items leave their lists; their new versions join.
    const replaced = many.slice(1, 3001).map((d, k) => ({ ...d, updated_at: 2, vector: k % 3 === 0 ? null : unit() }));
    delta.apply(replaced, [many[5000]?.id as number, many[5001]?.id as number]);
    expect(delta.hasDeadSlots).toBe(true);
    expect(listed()).toEqual(liveWithVector());
  });

  it('scores many keys per kernel call to the bit of one by one: a build, a delta across blocks, no vector, a zero query', () => {
    const r = seededRandom(11);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    const built = SearchIndex.build(
      Array.from({ length: 5_000 }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: i % 7 === 3 ? null : unit() })),
      64,
      100,
    );
    const fresh = new PreparedDelta({ docs: Array.from({ length: 2_500 }, (_, i) => doc(20_000 + i, `fresh ${i}`, '', { vector: i % 5 === 1 ? null : unit() })), masked: new Set() }, built);
    // Out of order, repeated, across the delta's blocks of 1,024 slots, and more build rows than one scan holds.
    const rows = Uint32Array.from({ length: 4_500 }, (_, j) => (j * 7919) % 5_000);
    const slots = Uint32Array.from([2_499, 0, 1_024, 1, 1_023, 2_048, 1_024, 6, 2_000]);
    for (const q of [unit(), new Float32Array(64)]) {
      const one = built.similarityTo(q);
      const outRows = new Float64Array(rows.length).fill(Number.NaN);
      built.similaritiesTo(q)(rows, rows.length, outRows);
      expect([...outRows]).toEqual([...rows].map((i) => one(i)));
      const oneSlot = fresh.similarityTo(q);
      const outSlots = new Float64Array(slots.length).fill(Number.NaN);
      fresh.similaritiesTo(q)(slots, slots.length, outSlots);
      expect([...outSlots]).toEqual([...slots].map((s) => oneSlot(s)));
    }
    expect(built.similarityTo(new Float32Array(64))(0)).toBe(0);
  });

  it("finds a build's nearest neighbours with rows scored many per kernel call, as one by one", () => {
    // 12,000 documents: no IVF, every row a candidate, coarse first; 3,000: exact.
    const r = seededRandom(9);
    const unit = () => normalize(Float32Array.from({ length: 64 }, () => r() - 0.5));
    for (const n of [12_000, 3_000]) {
      const built = SearchIndex.build(
        Array.from({ length: n }, (_, i) => doc(i + 1, `item ${i}`, '', { vector: i % 97 === 5 ? null : unit() })),
        64,
        100,
      );
      const q = unit();
      const sim = built.similarityTo(q);
      const quantised = built.vectorRow(0)?.rows.query(q) as (i: number, n?: number) => number;
      for (const accept of [() => true, (i: number) => i % 4 !== 1]) {
        const oneByOne = nearestOf(
          n,
          64,
          40,
          (dims, top) => {
            for (let i = 0; i < n; i++) if (built.vectorRow(i) && accept(i)) top.push(i, quantised(i, dims) * (built.vectorRow(i)?.scale as number));
          },
          oneAtATime(sim),
        );
        const best = (top: TopK) => {
          const out: [number, number][] = [];
          top.forEachBest((key, score) => out.push([key, score]));
          return out;
        };
        expect(best(built.nearest(q, 40, accept)), `${n}`).toEqual(best(oneByOne));
      }
    }
  });

  it('renumbers its slots once the replaced outnumber the live, and ranks as a delta made of the latest versions', () => {
    const versions = (v: number) => Array.from({ length: 10 }, (_, k) => doc(100 + k, `Trail item ${k} ${v % 2 ? 'running' : 'hiking'}`, `version ${v}`, { updated_at: v }));
    // Five documents written once, then 10 replaced 120 times: past 1,024 dead slots the delta
    // renumbers the live ones, the five included.
    const once = Array.from({ length: 5 }, (_, k) => doc(200 + k, `Trail static ${k}`, 'hiking'));
    const delta = new PreparedDelta({ docs: once, masked: new Set() }, index);
    for (let v = 1; v <= 120; v++) delta.apply(versions(v), []);
    expect(delta.slotCount).toBeLessThan(1024);
    const latest = new PreparedDelta({ docs: [...once, ...versions(120)], masked: new Set() }, index);
    const ranked = (d: PreparedDelta, query: string) =>
      rank(index, d, { query, mode: 'hybrid', filter: NO_FILTER, queryVector: emb.embedOne(query), profile: null }, { limit: 100 }).hits.map((h) => [h.doc.id, h.score]);
    for (const query of ['trail hikin', 'item 3 version', 'runni']) expect(ranked(delta, query), query).toEqual(ranked(latest, query));
    expect(ranked(delta, 'trail hikin').length).toBe(16);
    expect(delta.surfaces.has('hiking')).toBe(true);
    expect(delta.surfaces.has('running')).toBe(false);
  });

  it('round-trips through the artifact format', () => {
    const bytes = packIndex(buildIndexParts(docs, 64, 100));
    const back = new SearchIndex(unpackIndex(bytes));
    expect(back.builtAt).toBe(100);
    for (const mode of ['keyword', 'semantic', 'hybrid'] as const) expect(run(back, 'running shoe', mode), mode).toEqual(run(index, 'running shoe', mode));
    expect(new Set(run(back, 'runni'))).toEqual(new Set([1, 2]));
    // With how many documents write each surface word; an artifact from before it reads as unknown.
    expect(unpackIndex(bytes).surfaceDf).toEqual(buildIndexParts(docs, 64, 100).surfaceDf);
    const { surfaceDf: _d, ...before } = buildIndexParts(docs, 64, 100);
    expect(unpackIndex(packIndex(before)).surfaceDf).toBeUndefined();
  });

  it("copies a loaded build's vectors into the kernel's memory a few MB at a time, the thread's other work served between: the same index", async () => {
    const src = Int8Array.from({ length: 10 * 2 ** 20 }, (_, i) => ((i * 37) % 255) - 127);
    const { value: rows, turns } = await turnsDuring(() => Int8Rows.inTurns(src, 64, 16));
    // 10 MB: three turns of 4 MB, other work between each two.
    expect(turns).toBeGreaterThanOrEqual(2);
    const same = Buffer.from(rows.rows.buffer, rows.rows.byteOffset, rows.rows.byteLength).equals(Buffer.from(src.buffer, src.byteOffset, src.byteLength));
    expect(same).toBe(true);
    const bytes = packIndex(buildIndexParts(docs, 64, 100));
    const loaded = await SearchIndex.inTurns(unpackIndex(bytes), bytes.byteLength);
    for (const mode of ['keyword', 'semantic', 'hybrid'] as const) expect(run(loaded, 'running shoe', mode), mode).toEqual(run(index, 'running shoe', mode));
  });

  it("makes a loaded build's lookups (terms, ids, states) in turns, the thread's other work served between: the same index", async () => {
    // No vectors (a few hundred KB of zeros, copied in one turn): the turns are the lookups'.
    const many = Array.from({ length: 60_000 }, (_, i) => searchDoc(() => new Float32Array(0), i + 1, `lamp ${i % 7}`, '', { active: i % 3 > 0, vector: null }));
    const parts = buildIndexParts(many, 8, 1);
    const { value: loaded, turns } = await turnsDuring(() => SearchIndex.inTurns(parts, 0));
    // One turn after the vectors' copy; the terms, then 60,000 documents in three steps of 25,000.
    expect(turns).toBeGreaterThanOrEqual(3);
    const atOnce = new SearchIndex(parts);
    expect([...loaded.byId]).toEqual([...atOnce.byId]);
    expect(Buffer.from(loaded.ids.buffer).equals(Buffer.from(atOnce.ids.buffer))).toBe(true);
    expect(Array.from(loaded.active)).toEqual(many.map((d) => (d.active ? 1 : 0)));
    expect(run(loaded, 'lamp 3')).toEqual(run(atOnce, 'lamp 3'));
    expect(run(loaded, 'lamp 3').length).toBeGreaterThan(0);
  });

  it("reads an artifact's vectors in place (the index copies them into the kernel's memory) and copies its other sections", () => {
    const bytes = packIndex(buildIndexParts(docs, 64, 100));
    const parts = unpackIndex(bytes);
    expect(parts.vectors.buffer === bytes.buffer).toBe(true);
    for (const a of [parts.postingDocs, parts.postingTfs, parts.scales, parts.offsets]) expect(a.buffer === bytes.buffer).toBe(false);
    const index = new SearchIndex(parts);
    expect(index.parts.vectors.buffer === bytes.buffer).toBe(false);
    expect(Array.from(index.parts.vectors)).toEqual(Array.from(parts.vectors));
  });

  it("decodes an artifact's documents a section at a time when loading, the thread's other work served between: the same parts", async () => {
    const many = Array.from({ length: 4500 }, (_, i) => doc(i + 1, `lamp ${i}`, i % 2 ? 'brass' : 'steel', { metadata: { n: i } }));
    const bytes = packIndex(buildIndexParts(many, 64, 7));
    const { value: inTurns, turns } = await turnsDuring(() => unpackIndexInTurns(bytes));
    // 4,500 documents: three sections, other work between each two.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(inTurns).toEqual(unpackIndex(bytes));
    expect(inTurns.docs.map((d) => d.id)).toEqual(many.map((d) => d.id));
    expect(inTurns.docs[4499]).toEqual({ ...many[4499], vector: null });
  });

  it('takes no typo or completion through a word that only changed or deleted items wrote, as the next build would not', () => {
    // A review's find: "pgrty" reached parti through "party", the word of a deleted item, while
    // "Parties" kept the stem live; after a build nothing would be found.
    const items = [doc(1, 'Party Ben'), doc(2, 'Parties Galore'), doc(3, 'Running shoe'), doc(4, 'Run club')];
    const idx = SearchIndex.build(items, 64, 1);
    const gone = new PreparedDelta({ docs: [], masked: new Set([1, 3]) });
    const rebuilt = SearchIndex.build([items[1], items[3]] as SearchDoc[], 64, 1);
    // Changed instead: the words are gone from them.
    const changed = new PreparedDelta({ docs: [doc(1, 'Ben'), doc(3, 'Shoe')], masked: new Set() });
    const rebuiltChanged = SearchIndex.build([doc(1, 'Ben'), items[1], doc(3, 'Shoe'), items[3]] as SearchDoc[], 64, 1);
    for (const q of ['pgrty ', 'runni', 'parties ', 'run']) {
      expect(run(idx, q, 'keyword', gone), q).toEqual(run(rebuilt, q));
      expect(run(idx, q, 'keyword', changed), q).toEqual(run(rebuiltChanged, q));
    }
    expect(new Set(run(idx, 'pgrty '))).toEqual(new Set([1, 2]));
    expect(run(idx, 'pgrty ', 'keyword', gone)).toEqual([]);
    expect(new Set(run(idx, 'runni'))).toEqual(new Set([3, 4]));
    expect(run(idx, 'runni', 'keyword', gone)).toEqual([]);
  });

  it('loads an artifact built before words were kept (prefixes then match stems only)', () => {
    const { surface: _s, surfaceStem: _t, ...older } = buildIndexParts(docs, 64, 100);
    const { header, get } = unpackSections<Record<string, unknown>>(packIndex({ ...older, surface: [], surfaceStem: new Uint32Array(0) }));
    // As artifacts were then: the documents in the header, not in sections of their own.
    const { surface: _h, docChunks: _c, ...oldHeader } = header;
    const names = ['offsets', 'postingDocs', 'postingTfs', 'lens0', 'lens1', 'lens2', 'vectors', 'scales', 'hasVector'];
    const back = new SearchIndex(
      unpackIndex(
        packSections(
          { ...oldHeader, docs: older.docs.map(({ vector: _v, ...d }) => d) },
          names.map((n) => [n, get(n)]),
        ),
      ),
    );
    expect(run(back, 'running shoe')).toEqual(run(index, 'running shoe'));
    expect(run(back, 'waterp')).toEqual([3]);
    expect(run(back, 'runni')).toEqual([]);
  });

  it('uses an IVF over larger catalogs and still finds the nearest documents', () => {
    // Builds of 20,000 vectors or more have an IVF (below, nearest neighbours are exact).
    const many = Array.from({ length: 20_000 }, (_, i) => doc(i + 1, `widget ${i} ${['alpha', 'beta', 'gamma', 'delta'][i % 4]} model`));
    const big = SearchIndex.build(many, 64, 1);
    expect(big.parts.ivf).not.toBeNull();
    const q = emb.embedOne('widget 1234 gamma model');
    const top: number[] = [];
    big.nearest(q, 5, () => true).forEach((i) => top.push((big.docs[i] as SearchDoc).id));
    expect(top).toContain(1235);
    // A filter that few documents pass, scattered over the lists: the search goes on past the
    // lists it probes until it has k of them, or has read every list (it found none before).
    const ids = (k: number, accept: (id: number) => boolean) => {
      const out: number[] = [];
      big.nearest(q, k, (i) => accept((big.docs[i] as SearchDoc).id)).forEach((i) => out.push((big.docs[i] as SearchDoc).id));
      return out.sort((a, b) => a - b);
    };
    const scattered = [3, 4_001, 7_777, 12_345, 15_000, 18_888, 19_999];
    expect(ids(10, (id) => scattered.includes(id))).toEqual(scattered);
    expect(ids(5, (id) => id % 499 === 0)).toHaveLength(5);
    // Told which rows a selective filter may pass, it scores each of them instead: the exact
    // nearest among them. Asked only once the probed lists leave the top short, and when scoring
    // those rows (and a verdict of every row) costs less than reading lists until k are found.
    const rare = Array.from({ length: big.docs.length }, (_, i) => i).filter((i) => (big.docs[i] as SearchDoc).id % 499 === 0);
    let asked = 0;
    const passing = () => {
      asked++;
      return Uint32Array.from(rare);
    };
    const similarity = big.similarityTo(q);
    const exact = [...rare].sort((a, b) => similarity(b) - similarity(a) || a - b).slice(0, 30);
    const found: number[] = [];
    big.nearest(q, 30, (i) => rare.includes(i), passing).forEachBest((i) => found.push(i));
    expect([found, asked]).toEqual([exact, 1]);
    // Not when the lists are cheaper: every row passes, or the few still wanted are near.
    big.nearest(q, 30, () => true, passing);
    big.nearest(q, 5, (i) => rare.includes(i), passing);
    expect(asked).toBe(1);
  });

  it('sums document vectors as the catalog keeps them (build or delta rows), others left out', () => {
    const fresh = doc(9, 'Camp stove');
    const indexed = index.docs[0] as SearchDoc;
    const delta = new PreparedDelta({ docs: [fresh], masked: new Set() }, index);
    const sum = new Float32Array(64);
    const got = addDocVectors(
      index,
      delta,
      [delta.get(9), indexed, undefined, doc(10, 'x', '', { vector: new Float32Array(3) }), doc(1, 'stale copy', '', { vector: null }), doc(11, 'in neither')],
      [2, 0.5, 1, 1, 1, 1],
      sum,
    );
    expect(got).toBe(true);
    const freshRow = delta.vectorOf(delta.slotCount - 1) as Float32Array;
    const indexedRow = index.vectorOf(0) as Float32Array;
    for (let k = 0; k < 64; k++) expect(sum[k]).toBeCloseTo(2 * (freshRow[k] as number) + 0.5 * (indexedRow[k] as number), 5);
    // The same document sums to the same bits from the build as from the delta.
    const built = SearchIndex.build([...docs, fresh], 64, 100);
    const fromBuild = new Float32Array(64);
    const inBuild = (d: SearchDoc) => built.docs[built.byId.get(d.id) as number];
    addDocVectors(built, new PreparedDelta(undefined, built), [inBuild(fresh), inBuild(indexed)], [2, 0.5], fromBuild);
    expect(fromBuild).toEqual(sum);
    expect(addDocVectors(index, delta, [undefined], [1], new Float32Array(64))).toBe(false);
    expect(addDocVectors(index, delta, [indexed], [1], new Float32Array(32))).toBe(false);
  });
});

/** Only the given methods; any other call fails the test by name. */
function only<T extends object>(methods: Partial<T>): T {
  return new Proxy(methods, {
    get: (o, k) =>
      k in o
        ? (o as Record<PropertyKey, unknown>)[k]
        : () => {
            throw new Error(`unexpected call: ${String(k)}`);
          },
  }) as T;
}

describe('the taste boost', () => {
  it('is at most 1 + personalWeight, though the int8 similarity of an item to its own vector exceeds 1', () => {
    const emb = new HashingEmbedding(64);
    const names = ['red widget', 'blue widget box', 'green gadget', 'widget tool', 'big red widget crate'];
    const docs = names.map((name, i): SearchDoc => {
      const item = { name, description: 'widget', metadata: {} };
      return { id: i + 1, ...item, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: emb.embedOne(itemText(item)) };
    });
    const index = SearchIndex.build(docs, 64, 1);
    const sims = docs.map((d, i) => index.similarityTo(d.vector as Float32Array)(i));
    expect(Math.max(...sims)).toBeGreaterThan(1);
    for (const s of sims) expect(tasteBoost(s)).toBeLessThanOrEqual(1 + RANKING.personalWeight);
    expect(tasteBoost(-0.4)).toBe(1);
    expect(tasteBoost(0.5)).toBeCloseTo(1 + RANKING.personalWeight / 2, 12);
  });

  it("is made of the items' current versions, the same before and after a build: none of a deleted item, nor of one changed to no vector", async () => {
    const items = [doc(1, 'green tea'), doc(2, 'camp stove'), doc(3, 'steel kettle')];
    const built = SearchIndex.build(items, 64, 1);
    // Item 1 changed to a version without a vector, item 2 deleted, since the build.
    const changed = { ...(items[0] as SearchDoc), updated_at: 2, vector: null };
    const delta = new PreparedDelta({ docs: [changed], masked: new Set([2]) }, built);
    const rebuilt = SearchIndex.build([changed, items[2] as SearchDoc], 64, 2);
    const events = (ids: number[]): RecentEvent[] => ids.map((id, k) => ({ id: k + 1, item_id: String(id), type: 'view', created: 1 }));
    const taste = (index: SearchIndex, d: PreparedDelta, ids: number[]) => profileOf(index, d, events(ids));
    for (const ids of [[1], [2], [1, 2], [1, 2, 3], [3, 1]]) expect(taste(built, delta, ids)).toEqual(taste(rebuilt, new PreparedDelta(undefined, rebuilt), ids));
    expect(taste(built, delta, [1, 2])).toBeNull();
  });
});

describe('scores a cursor can rely on', () => {
  it('are the same to the last bit when the delta re-reads its documents in another order', () => {
    // Terms of the last word's prefix only the delta has: some shared, one of each document's own.
    const words = ['cambric', 'camel', 'cameo', 'camelot', 'cambium'];
    const own = (k: number) => `cam${String.fromCharCode(97 + (k % 26))}${String.fromCharCode(97 + Math.floor(k / 26))}x`;
    const index = SearchIndex.build([doc(1, 'camp stove'), doc(2, 'camping lantern with camera mount')], 64, 1);
    const some = (k: number, n: number) => Array.from({ length: n }, (_, j) => words[(k * 7 + j * 3) % 5]).join(' ');
    const fresh = Array.from({ length: 40 }, (_, k) => doc(100 + k, `${own(k)} ${some(k, 1 + (k % 4))} stove`, `${own(k)} ${some(k + 1, k % 6)} kettle ${'filler '.repeat(k % 9)}`));
    const delta = new PreparedDelta({ docs: fresh, masked: new Set() });
    const scores = (mode: 'keyword' | 'hybrid') =>
      new Map(
        rank(index, delta, { query: 'stove kettle cam', mode, filter: () => true, queryVector: emb.embedOne('stove kettle cam'), profile: null }, { limit: 1000 }).hits.map((h) => [h.doc.id, h.score]),
      );
    const before = { keyword: scores('keyword'), hybrid: scores('hybrid') };
    expect(before.keyword.size).toBe(42);
    // Each document read again (its embedding time changed), in another order: the delta's terms
    // and documents come back in another order, the content is the same.
    for (let round = 0; round < 3; round++) {
      delta.apply(
        fresh
          .filter((_, k) => k % (round + 2) === 0)
          .reverse()
          .map((d) => ({ ...d, embedding_updated_at: 2 + round })),
        [],
      );
      for (const mode of ['keyword', 'hybrid'] as const) {
        const after = scores(mode);
        for (const [id, s] of before[mode]) expect(after.get(id), `${mode} ${id}`).toBe(s);
      }
    }
  });
});

describe("a build's saturated frequencies", () => {
  it("are kept per statistics from a list's first scoring, dropped when they change, and score as computed unkept", () => {
    const docs = [doc(1, 'steel kettle', 'a kettle for the stove'), doc(2, 'kettle'), doc(3, 'copper pan', 'kettle lid fits')];
    const index = SearchIndex.build(docs, 64, 1);
    const p = index.postingsOf(index.parts.vocab.find((t) => t.startsWith('kettl')) as string);
    if (!p) throw new Error('no postings');
    const norms = index.norms(index.stats);
    const score = (n: typeof norms, list = p) => {
      const out = new Float32Array(3);
      scorePostings(list, n, 0, 1.7, out, new IntList(), false);
      return [...out];
    };
    expect(norms.saturated(p)).toBeUndefined();
    const first = score(norms);
    const kept = norms.saturated(p) as Float32Array;
    expect(kept).toHaveLength(3);
    // Scored again under the same statistics: from the same values, to the same bits.
    expect(score(norms)).toEqual(first);
    expect(norms.saturated(p)).toBe(kept);
    expect(index.norms(index.stats)).toBe(norms);
    // Other statistics (a delta's documents counted in): new norms, computed afresh.
    const other = index.norms({ ...index.stats, avgLen: index.stats.avgLen.map((a) => a * 2) });
    expect(other).not.toBe(norms);
    expect(other.saturated(p)).toBeUndefined();
    expect(score(other)).not.toEqual(first);
    expect(other.saturated(p)).not.toEqual(kept);
    // Computed unkept: the same bits as from the kept values.
    expect(score(norms, { ...p, keepAs: undefined })).toEqual(first);
    expect(first.every((x) => x > 0)).toBe(true);
    // From kept values, each key is listed once, when it first holds a score.
    const touched = new IntList();
    touched.push(7);
    const out = new Float32Array(3);
    scorePostings(p, norms, 0, 1, out, touched, false);
    scorePostings(p, norms, 0, 1, out, touched, true);
    expect([...touched.view()]).toEqual([7, 0, 1, 2]);
  });

  it("IntList's room keeps the values and makes room for as many more as asked", () => {
    const list = new IntList();
    for (let v = 0; v < 1000; v++) list.push(v);
    const buf = list.room(5000);
    expect(buf.length).toBeGreaterThanOrEqual(6000);
    for (let v = 1000; v < 6000; v++) buf[v] = v;
    list.length = 6000;
    expect([...list.view()]).toEqual(Array.from({ length: 6000 }, (_, v) => v));
    expect(list.room(0)).toBe(buf);
  });

  it("keeps a delta list's saturated frequencies while the delta's statistics stand, and computes them afresh once it changes", () => {
    const delta = new PreparedDelta({ docs: [doc(1, 'Trail shoe', 'light trail runner'), doc(2, 'Road shoe'), doc(3, 'Trail map', 'trail trail')], masked: new Set() }, SearchIndex.build([], 64, 1));
    const p = delta.postingsOf('trail') as Postings;
    const norms = delta.norms();
    const scores = (n: FieldNorms, list: Postings) => {
      const out = new Float32Array(delta.slotCount + 1);
      scorePostings(list, n, 0, 1.3, out, new IntList(), false, delta.live);
      return [...out];
    };
    expect(norms.saturated(p)).toBeUndefined();
    const first = scores(norms, p);
    const kept = norms.saturated(p) as Float32Array;
    expect(kept).toHaveLength(2);
    expect(scores(norms, p)).toEqual(first);
    expect(scores(norms, { ...p, keepAs: undefined })).toEqual(first);
    expect(delta.norms()).toBe(norms);
    // A change (a new version of 3, a new document): new norms, the lists' values computed afresh.
    delta.apply([doc(3, 'Trail map', 'trail', { updated_at: 2 }), doc(4, 'Trail trail')], []);
    const after = delta.norms();
    expect(after).not.toBe(norms);
    const p2 = delta.postingsOf('trail') as Postings;
    expect(after.saturated(p2)).toBeUndefined();
    // The list grew: what the old norms kept of it is not read for more postings than it has.
    expect(p2.keepAs).toBe(p.keepAs);
    expect(norms.saturated(p2)).toBeUndefined();
    expect(scores(after, p2)).toEqual(scores(after, { ...p2, keepAs: undefined }));
    expect(after.saturated(p2)).toHaveLength(4);
    // The replaced version of 3 is skipped, kept or not.
    expect(scores(after, p2)[2]).toBe(0);
  });
});

describe('feedback from the documents both lists agree on (hybrid, a query read as a request)', () => {
  // The two documents holding most of a long airship query are the best by keyword and by vector
  // alike; their other words ("zeppelin", "gondola") raise the matches that hold them, and no
  // other match changes.
  const texts = [
    'airship envelope hydrogen lift zeppelin',
    'airship envelope hydrogen lift gondola zeppelin',
    'airship zeppelin cells',
    'airship mooring mast',
    'airship history',
    'boat hull sail',
    'hydrogen fuel',
    'sail boat history',
  ];
  // The texts as descriptions, under names of one word found nowhere else: no name holds a
  // query's words (`namedBy`), and no name's word is in every document.
  const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  const docs = texts.map((t, i) => doc(i + 1, names[i] as string, t));
  const query = 'how does an airship envelope hold hydrogen for lift';
  const ranked = (index: SearchIndex, delta: PreparedDelta, q = query) =>
    new Map(rank(index, delta, { query: q, mode: 'hybrid', filter: () => true, queryVector: emb.embedOne(q), profile: null }, { limit: 100 }).hits.map((h) => [h.doc.id, h.score]));
  const withWeight = <T>(w: number, fn: () => T): T => {
    const before = RANKING.termFeedback.weight;
    RANKING.termFeedback.weight = w;
    try {
      return fn();
    } finally {
      RANKING.termFeedback.weight = before;
    }
  };
  const withAgreement = <T>(a: Partial<typeof RANKING.agreement>, fn: () => T): T => {
    const before = { ...RANKING.agreement };
    Object.assign(RANKING.agreement, a);
    try {
      return fn();
    } finally {
      Object.assign(RANKING.agreement, before);
    }
  };
  const index = SearchIndex.build(docs, 64, 1);
  const named = SearchIndex.build(
    texts.map((t, i) => doc(i + 1, t)),
    64,
    1,
  );

  it("adds the agreed documents' informative terms to the best of the fusion, and nothing to the rest", () => {
    const plain = withWeight(0, () => ranked(index, noDelta));
    const fed = ranked(index, noDelta);
    expect([...fed.keys()].sort()).toEqual([...plain.keys()].sort());
    expect(fed.size).toBeGreaterThanOrEqual(5);
    for (const [id, s] of fed) {
      const text = texts[id - 1] as string;
      if (/zeppelin|gondola/.test(text)) expect(s, text).toBeGreaterThan(plain.get(id) as number);
      else expect(s, text).toBe(plain.get(id));
    }
    // "airship zeppelin cells" matches one query word, as the mast and the history do, and comes first of them.
    const order = [...fed.keys()];
    expect(order.indexOf(3)).toBeLessThan(Math.min(order.indexOf(4), order.indexOf(5)));
  });

  it('feeds back only documents both lists rank among their best', () => {
    // The best keyword match has no vector yet: it is first of no vector list, so with one
    // document per list nothing is agreed on; with two, the second document of each list is.
    const some = [
      doc(1, names[0] as string, 'airship envelope hydrogen lift hold zeppelin', { vector: null }),
      doc(2, names[1] as string, 'airship envelope gondola'),
      doc(3, names[2] as string, 'airship zeppelin cells'),
      doc(4, names[3] as string, 'airship gondola mast'),
      doc(5, names[4] as string, 'boat'),
    ];
    const idx = SearchIndex.build(some, 64, 1);
    const plain = withAgreement({ docs: 0 }, () => ranked(idx, noDelta));
    expect(withAgreement({ agree: 1 }, () => ranked(idx, noDelta))).toEqual(plain);
    expect(withAgreement({ agree: 2 }, () => ranked(idx, noDelta))).not.toEqual(plain);
  });

  it("moves the query vector toward the agreed documents, not toward the rest of the fusion's best", () => {
    // Documents 1 and 2 hold most of the query and are agreed on; 3-5 match one word each and
    // are among the fusion's best 5 too. Without term feedback, moving toward the agreed two
    // alone leaves the one-word matches further than moving toward all five.
    const some = [
      doc(1, 'airship envelope hydrogen lift gas cells'),
      doc(2, 'airship envelope hydrogen lift fabric frame'),
      doc(3, 'frame bicycle steel tube welding'),
      doc(4, 'fabric cotton weaving loom textile'),
      doc(5, 'gas stove kitchen burner oven'),
    ];
    const idx = SearchIndex.build(some, 64, 1);
    const q = 'airship envelope hydrogen lift gas cells fabric frame';
    const [agreed, best5] = [{}, { docs: 0 }].map((a) => withWeight(0, () => withAgreement(a, () => ranked(idx, noDelta, q))));
    for (const id of [3, 4, 5]) expect(agreed?.get(id), String(id)).toBeLessThan(best5?.get(id) as number);
  });

  it('feeds back a short query too, unless it names one of its best matches', () => {
    // Under their one-word names, the agreed documents' other words raise the matches that hold them.
    const q = 'airship envelope';
    const plain = withWeight(0, () => ranked(index, noDelta, q));
    const fed = ranked(index, noDelta, q);
    expect([...fed.keys()].sort()).toEqual([...plain.keys()].sort());
    for (const [id, s] of fed) {
      const text = texts[id - 1] as string;
      if (/hydrogen|lift|zeppelin|gondola/.test(text)) expect(s, text).toBeGreaterThan(plain.get(id) as number);
      else expect(s, text).toBe(plain.get(id));
    }
    // With the texts as names, documents 1 and 2 are named by the query: no feedback.
    expect(ranked(named, noDelta, q)).toEqual(withWeight(0, () => ranked(named, noDelta, q)));
    // Also when a name holds a query word as a compound ("air-ship" is also airship).
    const joined = SearchIndex.build(
      texts.map((t, i) => doc(i + 1, t.replace('airship', 'air-ship'))),
      64,
      1,
    );
    expect(ranked(joined, noDelta, q)).toEqual(withWeight(0, () => ranked(joined, noDelta, q)));
  });

  it('reads a word the catalog lacks (a typo, half a word, a word of no document) as naming nothing', () => {
    // "zepelin" (a typo) and "cel" (half of "cells") are no word of the catalog, nor is "blimp":
    // "airship" and "zeppelin" decide, and document 3's name holds them.
    for (const q of ['airship zepelin cel', 'airship zeppelin blimp']) {
      expect(ranked(named, noDelta, q), q).toEqual(withWeight(0, () => ranked(named, noDelta, q)));
      expect(ranked(index, noDelta, q), q).not.toEqual(withWeight(0, () => ranked(index, noDelta, q)));
    }
  });

  it('ranks a document the same in the build and in the delta', () => {
    const half = SearchIndex.build(docs.slice(0, 5), 64, 1);
    const delta = new PreparedDelta({ docs: docs.slice(5), masked: new Set() }, half);
    const fresh = new PreparedDelta({ docs, masked: new Set() }, SearchIndex.build([], 64, 1));
    const built = ranked(index, noDelta);
    expect(ranked(half, delta)).toEqual(built);
    expect(ranked(SearchIndex.build([], 64, 1), fresh)).toEqual(built);
  });
});

describe('known-item search', () => {
  it('finds each item of the demo shop first by its name, whole or with its last word half typed (hybrid, as the search route embeds the query)', () => {
    // A shopper who types a product's name wants that product first, whatever feedback and
    // similar items would add (docs/benchmarks.md: feedback for queries of every length, unless
    // they name an item).
    const { items } = generateCatalog(seededRandom(21), DEMO_SIZES.small.items);
    const e = new HashingEmbedding(512);
    const docs: SearchDoc[] = items.map((it, i) => ({ id: i + 1, ...it, active: true, created: 1, updated_at: 1, embedding_updated_at: 1, vector: e.embedOne(itemText(it)) }));
    const index = SearchIndex.build(docs, 512, 1);
    const delta = new PreparedDelta({ docs: [], masked: new Set() }, index);
    const stats = delta.stats();
    // The full name, and the name with its last word half typed (as a search box sends it).
    const halfTyped = (name: string) => name.replace(/(\S+)$/, (w) => w.slice(0, Math.max(2, Math.ceil(w.length * 0.6))));
    const missed = items.flatMap((it, i) =>
      [it.name, halfTyped(it.name)].filter((query) => {
        const queryVector = e.embedOne(query, (t) => idfOf(stats.n, stats.df(t)));
        const hits = rank(index, delta, { query, mode: 'hybrid', filter: NO_FILTER, queryVector, profile: null }, { limit: 1 }).hits;
        return hits[0]?.doc.id !== i + 1;
      }),
    );
    expect(missed).toEqual([]);
  });
});

describe('names first', () => {
  // "Sweet" is the whole name of 4 only; 2 and 7 begin with it; 1 and 5 say it more often, in
  // longer names, and would rank above 4 by their words alone.
  const docs = [
    doc(1, 'The sweet sweet sound', 'sweet sweet sweet songs, sweet'),
    doc(2, 'Sweet Dreams (Are Made of This)', 'sweet sweet sweet sweet synth pop, sweet sweet'),
    doc(4, 'SWEET!', 'glam rock'),
    doc(5, 'Very sweet, sweet sweet', 'sweet sweet sweet'),
    doc(7, 'Sweet Home Alabama', 'southern rock'),
    doc(9, 'Nothing here', 'quiet'),
  ];
  const order = (query: string, mode: 'keyword' | 'hybrid', index: SearchIndex, delta = noDelta, profile: Float32Array | null = null) =>
    rank(index, delta, { query, mode, filter: () => true, queryVector: mode === 'hybrid' ? emb.embedOne(query) : null, profile }, { limit: 10 }).hits.map((h) => [h.doc.id, h.score] as const);
  const built = SearchIndex.build(docs, 64, 1);

  it('ranks the result named by the query first, then those whose name begins with its words, then with its last word half typed, the same in a build and in its delta', () => {
    for (const mode of ['keyword', 'hybrid'] as const) {
      const ids = order('sweet', mode, built).map(([id]) => id);
      expect(ids.slice(0, 3), mode).toEqual([4, ...ids.slice(1, 3).sort()]);
      expect(ids.slice(1, 3).sort(), mode).toEqual([2, 7]);
      // Case, accents and punctuation folded; stop words count: "the sweet" is no name's beginning but 1's.
      expect(order('Sweet home, alabama', mode, built)[0]?.[0], mode).toBe(7);
      expect(order('the sweet', mode, built)[0]?.[0], mode).toBe(1);
      const inDelta = order('sweet', mode, SearchIndex.build(docs.slice(3), 64, 1), new PreparedDelta({ docs: docs.slice(0, 3).reverse(), masked: new Set() }));
      expect(inDelta, mode).toEqual(order('sweet', mode, built));
    }
    // Its last word half typed (as a search box sends it): names beginning with the query's whole
    // words rank above those where it is only the start of a longer word.
    for (const mode of ['keyword', 'hybrid'] as const) expect(order('sweet ho', mode, built)[0]?.[0], mode).toBe(7);
    const sweeter = SearchIndex.build([...docs, doc(3, 'Sweeter days', 'sweet sweet sweet sweet sweet sweet')], 64, 1);
    expect(
      order('sweet', 'keyword', sweeter)
        .map(([id]) => id)
        .slice(0, 4),
    ).toEqual([4, 2, 7, 3]);
    // A taste for another item does not undo it.
    const taste = emb.embedOne('The sweet sweet sound sweet songs');
    expect(order('sweet', 'hybrid', built, noDelta, taste)[0]?.[0]).toBe(4);
  });

  it('finds names of stop words only, which no indexed word matches, the same in a build and in its delta', () => {
    const bands = [
      doc(11, 'The Who', 'rock band'),
      doc(12, 'The Whole Truth', 'drama'),
      doc(13, 'Up (2009)', 'animation'),
      doc(14, 'Up Close and Personal', 'romance'),
      doc(15, 'Upside Down', 'science fiction'),
      doc(16, 'It', 'horror'),
      doc(17, 'Italian Job', 'heist'),
    ];
    const ids = (query: string, mode: 'keyword' | 'hybrid', index: SearchIndex, delta = noDelta) => order(query, mode, index, delta).map(([id]) => id);
    const built = SearchIndex.build(bands, 64, 1);
    for (const mode of ['keyword', 'hybrid'] as const) {
      expect(ids('The Who', mode, built)[0], mode).toBe(11);
      // A whole word before its completions (by keyword score, the larger share of the name first).
      const up = ids('up', mode, built);
      expect(mode === 'keyword' ? up.slice(0, 3) : [...up.slice(0, 2).sort(), up[2]], mode).toEqual([13, 14, 15]);
      expect(ids('it', mode, built)[0], mode).toBe(16);
      const split = SearchIndex.build(bands.slice(3), 64, 1);
      const delta = new PreparedDelta({ docs: bands.slice(0, 3).reverse(), masked: new Set() });
      for (const query of ['The Who', 'up', 'it']) expect(order(query, mode, split, delta), `${mode} ${query}`).toEqual(order(query, mode, built));
    }
    // A build's copy replaced in the delta is found under its new name only; a deleted one not at all.
    const changed = new PreparedDelta({ docs: [doc(11, 'The Guess Who', 'rock band')], masked: new Set([16]) }, built);
    expect(ids('The Who', 'keyword', built, changed)).not.toContain(11);
    expect(ids('it', 'keyword', built, changed)).not.toContain(16);
    expect(ids('The Guess Who', 'keyword', built, changed)[0]).toBe(11);
  });

  it('scores names of stop words only by the accepted matches: the same before and after a build, whatever the hidden copies of the build', () => {
    // 20's build copy says "whole" often; the delta changes it. Its hidden copy set the score of "The Who".
    const before = [doc(11, 'The Who', 'rock band'), doc(20, 'Whole whole whole', 'whole whole'), doc(24, 'A long title that mentions whole once', 'desc')];
    const after = [doc(11, 'The Who', 'rock band'), doc(20, 'Something else', 'z'), doc(24, 'A long title that mentions whole once', 'desc')];
    const old = SearchIndex.build(before, 64, 1);
    const changed = new PreparedDelta({ docs: [after[1] as SearchDoc], masked: new Set() }, old);
    const fresh = SearchIndex.build(after, 64, 1);
    for (const mode of ['keyword', 'hybrid'] as const) expect(order('The Who', mode, old, changed), mode).toEqual(order('The Who', mode, fresh));
  });

  it('takes only the name that is the query when stop words begin more names than the bound (a cost bound)', () => {
    const index = SearchIndex.build([doc(1, 'The Band'), doc(2, 'The'), doc(3, 'The Whole Story'), doc(4, 'Other')], 64, 1);
    const search = () => rank(index, noDelta, { query: 'the', mode: 'keyword', filter: () => true, queryVector: null, profile: null }, { limit: 10 });
    expect(search().hits.map((h) => h.doc.id)).toEqual([2, 1, 3]);
    const bound = RANKING.names.stopWordNames;
    try {
      RANKING.names.stopWordNames = 2;
      expect(search().hits.map((h) => h.doc.id)).toEqual([2]);
      expect(search().total).toBe(1);
    } finally {
      RANKING.names.stopWordNames = bound;
    }
  });

  it('takes the last word as half typed only when the query ends in it: "star." and "star " are the whole word', () => {
    const stars = SearchIndex.build([doc(1, 'Stargate', 'a star gate'), doc(2, 'Lone star', 'star star'), doc(3, 'Evening star', 'star')], 64, 1);
    for (const mode of ['keyword', 'hybrid'] as const) {
      expect(order('star', mode, stars)[0]?.[0], mode).toBe(1);
      for (const query of ['star.', 'star ']) expect(order(query, mode, stars)[0]?.[0], `${mode} ${query}`).not.toBe(1);
    }
  });

  it('is what moves them: without it the longer names rank first', () => {
    const pool = RANKING.names.pool;
    try {
      RANKING.names.pool = 0;
      expect(order('sweet', 'keyword', built)[0]?.[0]).not.toBe(4);
    } finally {
      RANKING.names.pool = pool;
    }
  });
});

describe('the hybrid head', () => {
  it('gives vector scores to 500 keyword matches at most, ties to the lower ids, the same in a build and in its delta', () => {
    // 1,200 names of two words, one shared: every match of "compact" has the same keyword score.
    const word = (k: number) => Array.from({ length: 5 }, (_, j) => String.fromCharCode(97 + (Math.floor(k / 26 ** j) % 26))).join('');
    const docs = Array.from({ length: 1200 }, (_, k) => doc(1 + ((k * 7919) % 1200), `compact ${word(k)}`));
    const hybrid = (index: SearchIndex, delta: PreparedDelta) =>
      rank(index, delta, { query: 'compact', mode: 'hybrid', filter: () => true, queryVector: emb.embedOne('compact'), profile: null }, { limit: 1200 }).hits.map((h) => [h.doc.id, h.score] as const);
    const built = hybrid(SearchIndex.build(docs, 64, 1), noDelta);
    expect(built).toHaveLength(1200);
    // Without a vector score a match scores the keyword share alone (its keyword score is the best).
    const vectorScored = built.filter(([, s]) => s > RANKING.hybridAlpha).map(([id]) => id);
    expect(vectorScored.length).toBeGreaterThan(400);
    expect(Math.max(...vectorScored)).toBeLessThanOrEqual(500);
    expect(built.filter(([id]) => id > 500).every(([, s]) => s === RANKING.hybridAlpha)).toBe(true);
    // Half of them in the delta (in another order): the same list, score for score.
    const inDelta = hybrid(SearchIndex.build(docs.slice(0, 600), 64, 1), new PreparedDelta({ docs: docs.slice(600).reverse(), masked: new Set() }));
    expect(inDelta).toEqual(built);
  });
});

describe('the postings budget of a long query', () => {
  it('ranks a document holding adjacent query words above one holding them apart (term proximity), the same in a build and in its delta', () => {
    // The same words in both (the same BM25F), adjacent in 7 only; the lower id wins a tie.
    const docs = [doc(3, 'gear', 'transfer of the boundary heat layer'), doc(7, 'gear', 'heat transfer in the boundary layer'), doc(9, 'other', 'nothing')];
    const search = (query: string, index: SearchIndex, delta = noDelta) => rank(index, delta, { query, mode: 'keyword', filter: () => true, queryVector: null, profile: null }, { limit: 10 });
    const built = SearchIndex.build(docs, 64, 1);
    expect(search('heat transfer', built).hits.map((h) => h.doc.id)).toEqual([7, 3]);
    // The pair in the other order, or words apart, adds nothing: the tie stands.
    expect(search('transfer heat', built).hits.map((h) => h.doc.id)).toEqual([3, 7]);
    expect(search('heat boundary', built).hits.map((h) => h.doc.id)).toEqual([3, 7]);
    const inDelta = search('heat transfer', SearchIndex.build(docs.slice(2), 64, 1), new PreparedDelta({ docs: docs.slice(0, 2).reverse(), masked: new Set() }));
    expect(inDelta.hits.map((h) => [h.doc.id, h.score])).toEqual(search('heat transfer', built).hits.map((h) => [h.doc.id, h.score]));
    // Hybrid without a query vector (an index of other dimensions) ranks its keyword matches alike.
    expect(rank(built, noDelta, { query: 'heat transfer', mode: 'hybrid', filter: () => true, queryVector: null, profile: null }, { limit: 10 }).hits.map((h) => h.doc.id)).toEqual([7, 3]);
    // Pairs are told apart by more than 32 bits: "thu contract" has the same FNV-1a hash as "comput place".
    const twins = SearchIndex.build([doc(5, 'place for computing contract thus'), doc(8, 'place for computing thus contract')], 64, 1);
    expect(search('computing place', twins).hits.map((h) => h.doc.id)).toEqual([5, 8]);
    const weight = RANKING.proximity.weight;
    try {
      RANKING.proximity.weight = 0;
      expect(search('heat transfer', built).hits.map((h) => h.doc.id)).toEqual([3, 7]);
    } finally {
      RANKING.proximity.weight = weight;
    }
  });

  it("counts a query's pairs in a document's as a binary search per pair does, in one pass when that reads less (term proximity)", () => {
    const r = seededRandom(5);
    const draw = (n: number, range: number) => Float64Array.from({ length: n }, () => Math.floor(r() * range) * 2 ** 21 + 7).sort();
    for (let round = 0; round < 300; round++) {
      // Few pairs against a long document (searched) and many against a short one (one pass), with repeats.
      const doc = draw(Math.floor(r() * 200), 40 + Math.floor(r() * 200));
      const codes = [...new Set(draw(1 + Math.floor(r() * 120), 60 + Math.floor(r() * 200)))].sort(() => r() - 0.5);
      const at = Int32Array.from(codes.keys()).sort((x, y) => (codes[x] as number) - (codes[y] as number));
      const counts = new Float64Array(codes.length).fill(1);
      addCounts(
        doc,
        Float64Array.from(at, (j) => codes[j] as number),
        at,
        counts,
      );
      expect([...counts]).toEqual(codes.map((c) => 1 + countOf(doc, c)));
    }
  });

  it('leaves out the commonest words of a long query past it, the same in a build and in its delta; a short query keeps them', () => {
    const docs = [...Array.from({ length: 40 }, (_, k) => doc(100 + k, `common widget ${k}`)), doc(1, 'rare sprocket'), doc(2, 'rare flange common'), doc(3, 'gasket')];
    const search = (query: string, index: SearchIndex, delta = noDelta) => rank(index, delta, { query, mode: 'keyword', filter: () => true, queryVector: null, profile: null }, { limit: 100 });
    const long = 'rare sprocket flange gasket common bolts nuts screws';
    const built = SearchIndex.build(docs, 64, 1);
    const before = RANKING.maxPostings;
    const proximity = RANKING.proximity.weight;
    try {
      RANKING.maxPostings = 40;
      // Scores compared across queries whose words are in other orders: without term proximity.
      RANKING.proximity.weight = 0;
      // 8 words: "common" (in 41 documents) does not fit after the rarer words (5 postings).
      const r = search(long, built);
      expect(r.hits.map((h) => h.doc.id).sort((a, b) => a - b)).toEqual([1, 2, 3]);
      expect(r.total).toBe(3);
      // Document 2 keeps the score of its other words only.
      expect(r.hits.find((h) => h.doc.id === 2)?.score).toBe(search('rare flange sprocket gasket bolts nuts screws nails', built).hits.find((h) => h.doc.id === 2)?.score);
      const inDelta = search(long, SearchIndex.build(docs.slice(0, 20), 64, 1), new PreparedDelta({ docs: docs.slice(20).reverse(), masked: new Set() }));
      expect(inDelta.hits.map((h) => [h.doc.id, h.score])).toEqual(r.hits.map((h) => [h.doc.id, h.score]));
      // Fewer words: every word counts.
      expect(search('rare sprocket common', built).total).toBe(42);
    } finally {
      RANKING.maxPostings = before;
      RANKING.proximity.weight = proximity;
    }
    expect(search(long, built).total).toBe(43);
  });
});

describe('index status', () => {
  it('counts from the index and a listing of the changes, reading no item data', async () => {
    const listed: ChangeKey[] = [
      { state: 'a', cursor: 'a', id: 1, deleted: false, at: 10 },
      { state: 'b', cursor: 'b', id: 2, deleted: false, at: 12 },
      { state: 'c', cursor: 'c', id: 3, deleted: true, at: 15 },
    ];
    const deps = {
      items: only<ItemStore>({ changeKeysSince: async () => listed, pendingCount: async () => 1 }),
      events: only<EventStore>({}),
      blobs: only<BlobStore>({ get: async () => undefined }),
      embedder: new HashingEmbedding(64),
    };
    // No index built yet: everything listed is a change since "the build".
    expect(await indexStatus(deps, 'status-probe')).toEqual({ items: 2, embedded: 1, pending: 1, updated_at: 15, index_built_at: null, changes_since_build: 3 });
  });

  it('lists only what changed since its previous listing (less the clock-skew margin), keeping the latest state of each item', async () => {
    const asked: number[] = [];
    let listed: ChangeKey[] = [
      { state: 'a', cursor: 'a', id: 1, deleted: false, at: 10 },
      { state: 'b', cursor: 'b', id: 2, deleted: false, at: 12 },
    ];
    const deps = {
      items: only<ItemStore>({
        changeKeysSince: async (_tenant, since) => {
          asked.push(since);
          return listed;
        },
        pendingCount: async () => 0,
      }),
      events: only<EventStore>({}),
      blobs: only<BlobStore>({ get: async () => undefined }),
      embedder: new HashingEmbedding(64),
    };
    let now = 1_000_000_000;
    const restore = setClock({ nowMs: () => now });
    try {
      expect(await indexStatus(deps, 'status-tally')).toMatchObject({ items: 2, updated_at: 12, changes_since_build: 2 });
    } finally {
      restore();
    }
    // Later: item 2 was deleted and item 3 created; the listing starts at the previous one's
    // start less the skew margin, and its states replace the earlier ones.
    listed = [
      { state: 'b2', cursor: 'b2', id: 2, deleted: true, at: 1_000_100 },
      { state: 'c', cursor: 'c', id: 3, deleted: false, at: 1_000_101 },
    ];
    now = 1_000_200_000;
    const restoreAgain = setClock({ nowMs: () => now });
    try {
      expect(await indexStatus(deps, 'status-tally')).toEqual({ items: 2, embedded: 2, pending: 0, updated_at: 1_000_101, index_built_at: null, changes_since_build: 3 });
    } finally {
      restoreAgain();
    }
    // The first call lists the skew window once more at once (below); the later call lists from the start of that.
    expect(asked).toEqual([0, 1_000_000 - SEARCH_SETTINGS.skewSeconds, 1_000_000 - SEARCH_SETTINGS.skewSeconds]);
  });

  it('counts an item whose change row moved while its first listing ran (found at neither key by it)', async () => {
    const a: ChangeKey = { state: 'a', cursor: 'a', id: 1, deleted: false, at: 10 };
    // Item 2's embedding is saved during the first listing: its row is between its old key and its new one.
    const moved: ChangeKey = { state: 'b-embedded', cursor: 'b-embedded', id: 2, deleted: false, at: 11 };
    let calls = 0;
    const deps = {
      items: only<ItemStore>({ changeKeysSince: async () => (calls++ === 0 ? [a] : [moved]), pendingCount: async () => 0 }),
      events: only<EventStore>({}),
      blobs: only<BlobStore>({ get: async () => undefined }),
      embedder: new HashingEmbedding(64),
    };
    expect(await indexStatus(deps, 'status-moving')).toMatchObject({ items: 2, updated_at: 11, changes_since_build: 2 });
  });
});

describe('Bedrock Titan V2 provider', () => {
  it('invokes the model with the dimensions and normalisation, and returns unit vectors', async () => {
    const bedrock = mockClient(BedrockRuntimeClient);
    bedrock.on(InvokeModelCommand).callsFake(async () => ({ body: new TextEncoder().encode(JSON.stringify({ embedding: Array.from({ length: 256 }, (_, i) => (i === 0 ? 3 : i === 1 ? 4 : 0)) })) }));
    const p = new BedrockTitanEmbedding(new BedrockRuntimeClient({ region: 'eu-west-1' }), 256);
    const [v] = await p.embed(['hello']);
    expect(v?.[0]).toBeCloseTo(0.6);
    expect(v?.[1]).toBeCloseTo(0.8);
    const input = bedrock.commandCalls(InvokeModelCommand)[0]?.args[0].input;
    expect(input?.modelId).toBe(TITAN_V2);
    expect(JSON.parse(String(input?.body))).toEqual({ inputText: 'hello', dimensions: 256, normalize: true });
    bedrock.on(InvokeModelCommand).resolves({ body: new TextEncoder().encode('{"embedding":[1,2]}') } as never);
    await expect(p.embed(['x'])).rejects.toThrow(/256-dimensional/);
    bedrock.restore();
  });
});

describe('SQS workers', () => {
  const event = (...bodies: unknown[]): SQSEvent => ({
    Records: bodies.map((b, i) => ({
      messageId: `m${i}`,
      receiptHandle: `r${i}`,
      body: typeof b === 'string' ? b : JSON.stringify(b),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn',
      awsRegion: 'eu-west-1',
    })),
  });
  const ctx = { awsRequestId: 'x', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

  it('reports only the failed records (malformed or throwing) as batch item failures', async () => {
    const handler = sqsWorker(async (job) => {
      if (job.type === 'embed' && job.item_id === 2) throw new Error('boom');
    });
    const res = await handler(event({ type: 'embed', tenant: 't', item_id: 1 }, { type: 'embed', tenant: 't', item_id: 2 }, 'not json', { type: 'nope' }), ctx);
    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m1', 'm2', 'm3']);
  });

  it('locally: retries failed messages, then dead-letters them after maxReceiveCount, to a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dlq-'));
    const seen = new Map<string, number>();
    const handler = sqsWorker(async (job) => {
      if (job.type !== 'embed') return;
      seen.set(String(job.item_id), (seen.get(String(job.item_id)) ?? 0) + 1);
      if (job.item_id === 13) throw new Error('always fails');
    });
    const q = new LocalQueue('embedding', handler, { batchSize: 10, maxReceiveCount: 3, retryDelayMs: 5, deadLetterFile: join(dir, 'dlq.jsonl') });
    q.send([JSON.stringify({ type: 'embed', tenant: 't', item_id: 7 }), JSON.stringify({ type: 'embed', tenant: 't', item_id: 13 })]);
    await q.idle();
    expect(seen.get('7')).toBe(1);
    expect(seen.get('13')).toBe(3);
    expect(q.deadLetters.map((d) => JSON.parse(d.body).item_id)).toEqual([13]);
    expect(JSON.parse(readFileSync(join(dir, 'dlq.jsonl'), 'utf8').trim())).toMatchObject({ receiveCount: 3 });
    rmSync(dir, { recursive: true, force: true });
  });

  it('locally: keeps the bodies sent only when asked (a long-running stack would keep them all)', () => {
    const body = JSON.stringify({ type: 'embed', tenant: 't', item_id: 1 });
    const kept = new LocalQueue('embedding', undefined, { batchSize: 10, maxReceiveCount: 3, retryDelayMs: 5, recordSent: true });
    kept.send([body, body]);
    expect(kept.sent).toEqual([body, body]);
    const plain = new LocalQueue('embedding', undefined, { batchSize: 10, maxReceiveCount: 3, retryDelayMs: 5 });
    plain.send([body]);
    expect(plain.depth).toBe(1);
    expect(() => plain.sent).toThrow(/recordSent/);
  });

  it('locally: drains a large backlog in order, several batches at once but never more than asked', async () => {
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const handler = async (event: SQSEvent) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 1));
      for (const r of event.Records) order.push((JSON.parse(r.body) as { item_id: number }).item_id);
      running -= 1;
    };
    const q = new LocalQueue('embedding', handler, { batchSize: 10, maxReceiveCount: 3, retryDelayMs: 5, concurrency: 4 });
    q.send(Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ type: 'embed', tenant: 't', item_id: i + 1 })));
    expect(q.depth).toBe(20_000);
    await q.idle();
    expect(q.depth).toBe(0);
    expect(most).toBe(4);
    expect(order).toHaveLength(20_000);
    expect(new Set(order).size).toBe(20_000);
    // Batches start in send order (they may finish out of order).
    expect(order.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });
});

describe('TopK', () => {
  it('keeps the k highest scores, each with its own key, whatever the order and ties', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(rand() * 60);
      const k = Math.floor(rand() * 12);
      // Few distinct values, so ties at the cut are common.
      const scores = Array.from({ length: n }, () => Math.floor(rand() * 8) / 4 - 0.5);
      const top = new TopK(k);
      scores.forEach((s, key) => top.push(key * 3 + 1, s));
      const kept = new Map<number, number>();
      top.forEach((key, s) => kept.set(key, s));
      const want = [...scores].sort((a, b) => b - a).slice(0, k);
      expect(kept.size).toBe(want.length);
      expect([...kept.values()].sort((a, b) => b - a)).toEqual(want);
      for (const [key, s] of kept) expect(scores[(key - 1) / 3]).toBe(s);
    }
  });

  it('gives them best first, the same score to the lower tie-break, and leaves them kept', () => {
    const rand = seededRandom(11);
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(rand() * 300);
      const k = Math.floor(rand() * 120);
      const pairs = Array.from({ length: n }, (_, i) => ({ key: i, score: Math.floor(rand() * 6), tie: Math.floor(rand() * 1e6) * n + i }));
      const top = new TopK(k);
      for (const p of pairs) top.push(p.key, p.score, p.tie);
      const want = [...pairs].sort((a, b) => b.score - a.score || a.tie - b.tie).slice(0, k);
      const got: [number, number][] = [];
      top.forEachBest((key, score) => got.push([key, score]));
      expect(got).toEqual(want.map((p) => [p.key, p.score]));
      expect(top.bestKeys()).toEqual(want.map((p) => p.key));
    }
  });
});

describe('request words', () => {
  it('are dropped from a query of at least the given number of words, keeping the rest as written', () => {
    expect(withoutRequestWords('I am interested in Papers that discuss compiler optimization', 8)).toBe(
      'I am interested in Papers that discuss compiler optimization'.replace(/interested |Papers |discuss /g, ''),
    );
    expect(withoutRequestWords('Articles on time-sharing systems for the IBM 360, please, and their scheduling', 8)).toBe('on time-sharing systems for the IBM 360, , and their scheduling');
    // Shorter: every word kept.
    expect(withoutRequestWords('recycled paper for printers', 8)).toBe('recycled paper for printers');
    // Nothing but request words: kept, there would be no query left.
    expect(withoutRequestWords('papers articles documents papers articles documents papers articles', 8)).toBe('papers articles documents papers articles documents papers articles');
    expect(REQUEST_WORDS.has('paper')).toBe(true);
    // A query with other than ASCII: its words folded one by one ("Pâpers", "ＤＩＳＣＵＳＳ").
    expect(withoutRequestWords('Pâpers that ＤＩＳＣＵＳＳ the résumé of compiler optimisation café', 8)).toBe('that the résumé of compiler optimisation café');
  });
});

describe('similarity between documents (the diversity control)', () => {
  const unit = (v: Float32Array) => {
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, k) => s + x * (b[k] as number), 0);

  it('any two documents: the cosine of their vectors as stored, the same whether each is in the build or the delta', async () => {
    const { similarityIn } = await import('../../shared/search/vectors.ts');
    const docs = Array.from({ length: 30 }, (_, k) => doc(k + 1, `item ${k} lamp`, `shade ${k % 7} brass ${k % 3}`));
    const index = SearchIndex.build(docs, 64, 1);
    const fresh = [doc(101, 'fresh lamp', 'shade 2 brass 1'), doc(102, 'other kettle', 'steel')];
    const delta = new PreparedDelta({ docs: fresh, masked: new Set() }, index);
    const similarity = similarityIn(index, delta);
    // Vectors as the catalog stores them (int8, scaled; read back as float32, hence 6 digits): a's unit vector against b's.
    const stored = (id: number) => (id > 100 ? delta.vectorOf(id - 101) : index.vectorOf(index.byId.get(id) as number)) as Float32Array;
    const inDelta = (id: number) => delta.get(id) as SearchDoc;
    const inIndex = (id: number) => index.docs[index.byId.get(id) as number] as SearchDoc;
    const of = (id: number) => (id > 100 ? inDelta(id) : inIndex(id));
    // Everything in one build instead: each pair scores the same bits.
    const all = SearchIndex.build([...docs, ...fresh], 64, 1);
    const allSimilarity = similarityIn(all, new PreparedDelta(undefined, all));
    const inAll = (id: number) => all.docs[all.byId.get(id) as number] as SearchDoc;
    for (const a of [1, 5, 17, 101, 102]) {
      const toA = similarity({ doc: of(a) });
      const toAllA = allSimilarity({ doc: inAll(a) });
      const ua = unit(stored(a));
      for (const b of [1, 2, 9, 30, 101, 102]) {
        expect(toA({ doc: of(b) })).toBeCloseTo(dot(ua, stored(b)), 6);
        expect(toAllA({ doc: inAll(b) })).toBe(toA({ doc: of(b) }));
      }
    }
    // Without a vector, or a document the catalog does not hold: 0.
    const bare = SearchIndex.build([doc(1, 'a', '', { vector: null }), doc(2, 'b')], 64, 1);
    const none = similarityIn(bare, noDelta)({ doc: bare.docs[0] as SearchDoc });
    expect(none({ doc: bare.docs[1] as SearchDoc })).toBe(0);
    expect(similarityIn(bare, noDelta)({ doc: bare.docs[1] as SearchDoc })({ doc: doc(3, 'elsewhere') })).toBe(0);
  });
});

describe('the collections in other shapes (bench:search --in-process --shapes)', () => {
  const c: Collection = {
    name: 'tiny',
    docs: [
      { id: 1, title: 'Swept wings', text: 'Heat transfer on swept wings.' },
      { id: 2, title: '', text: 'Boundary layers.' },
    ],
    queries: [{ n: 1, text: 'What are the effects of heat-transfer on swept wings?' }],
    qrels: new Map([[1, new Set([1])]]),
  };
  const shaped = (name: string) => (SHAPES[name] as (c: Collection) => Collection)(c);

  it('cuts queries to their first content words, as the service reads words', () => {
    expect(shaped('queries of 5 words').queries[0]?.text).toBe('effects heat transfer swept wings');
    expect(shaped('queries of 3 words').queries[0]?.text).toBe('effects heat transfer');
    expect(shaped('queries of 3 words').docs).toBe(c.docs);
  });

  it('takes the titles away, or moves them into the text', () => {
    expect(shaped('documents without titles').docs.map((d) => [d.title, d.text])).toEqual([
      ['', 'Heat transfer on swept wings.'],
      ['', 'Boundary layers.'],
    ]);
    expect(shaped('titles in the text').docs.map((d) => [d.title, d.text])).toEqual([
      ['', 'Swept wings Heat transfer on swept wings.'],
      ['', 'Boundary layers.'],
    ]);
    expect(shaped('titles in the text').queries).toBe(c.queries);
  });
});
