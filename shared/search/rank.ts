/**
 * Ranking one request over a build and its delta. Documents are keys: index position i, or
 * N + s for the delta's slot s. The steps: keyword scores (BM25F, `keywordMatches`), vector
 * scores of the neighbours and of the strongest keyword matches (`vectorStage`, with
 * pseudo-relevance feedback), their fusion (`fused`), term feedback (`termFeedback`) and term
 * proximity (`proximity`) over the best, and the page (`emitAll`); an empty query browses instead
 * (`browse`).
 */
import { kthLargest, TopK } from '../top-k.ts';
import { idfOf, postingOf, postingScore, scorePostings, type CollectionStats, type FieldNorms } from './bm25f.ts';
import { RANKING } from './constants.ts';
import type { ColumnCache } from './columns.ts';
import type { PreparedDelta } from './delta.ts';
import { normalize } from './embedding.ts';
import type { SearchIndex } from './engine.ts';
import type { Expansion } from './expand.ts';
import { IntList } from './int-list.ts';
import { KeyScores } from './key-scores.ts';
import { ResultPage, type PageRequest } from './page.ts';
import { builtVectorAsOf, hadVectorBy } from './vectors.ts';
import { addCounts, analysedTerms, FIELD_NAMES, fieldPairs, nameWords, pairCode, type Field } from './analyze.ts';
import type { Alternatives } from './synonyms.ts';
import { byTerm, phraseTerms, STOP_WORDS, withoutRequestWords, words } from './text.ts';
import { ASK, FAILS, NO_FILTER, PASSES, type DocFilter, type Hit, type SearchDoc, type SearchMode, vectorSavedMs } from './types.ts';

export { PreparedDelta, type Delta } from './delta.ts';
export { byRank, type PageRequest } from './page.ts';

export interface RankRequest {
  query: string;
  /**
   * Phrases synonym sets bring for the query's words ("television set" for tv: `applySynonyms`):
   * each scores, as one word of the query (the mean of its terms' scores), only the documents that
   * hold all its terms.
   */
  phrases?: readonly string[] | undefined;
  /**
   * The one-word synonyms in `query` by the query term that brought them (`applySynonyms`): each
   * scores as that word of the query, not as a word of its own (`asOneWord`).
   */
  alternatives?: readonly Alternatives[] | undefined;
  /**
   * The query as the user asked it, before synonyms added words to `query` (and a long query's
   * request words were taken out): names first compares names with it. `query` when absent.
   */
  asked?: string | undefined;
  mode: SearchMode;
  filter: DocFilter;
  queryVector: Float32Array | null;
  profile: Float32Array | null;
  /** The Platform's item search also finds inactive items; Core search never does. */
  includeInactive?: boolean;
  /**
   * A later page's: the largest item id its first page ranked (`Cursor.upTo`). Items created
   * since (all in the delta) are no match: a new best match would rescale every hybrid score and
   * move feedback, and the cursor's position with them.
   */
  upTo?: number | undefined;
  /**
   * A later page's: when (ms) the newest vector its first page's view held was saved
   * (`Cursor.vectorsAsOf`). A vector saved since is none of this page's (`withoutVectorsSince`):
   * the item scores as on the first page, without one, instead of rising past the cursor, or by
   * the build's vector of it when that one was saved by then (embedded anew since).
   */
  vectorsAsOf?: number | undefined;
}

export interface Ranked {
  /** The page, plus one more hit when there is a next page. */
  hits: Hit[];
  /** Every match of the query and filters. */
  total: number;
  /** When names first lifted results (`namesFirst`): every lifted result scores above it, every other one at most it. */
  namedAbove?: number;
}

/** Keyword matches beyond this many (by keyword score) are not given a vector score in hybrid mode. */
const HYBRID_VECTOR_LIMIT = 500;

/**
 * Ranking's working memory, reused by every request of the container: ranking is synchronous, so
 * one request uses it at a time, and it leaves the accumulators zeroed. Bound: `acc`, `best`,
 * `other` and `similarities` grow to the largest build + delta ranked (4, 4, 4 and 8 bytes per
 * document, 1.5 × when regrown), as do `vec`, `kws` and `headKeys`, the lists to the most keyword
 * matches of one query (4 or 8 bytes each), and `unscored` and `split` to twice the most keys one
 * query scores by similarity; it holds nothing between requests.
 */
const scratch = {
  /**
   * Keyword score per key, added up in single precision as Lucene's scores are: half the memory a
   * broad query's scoring reads and writes at random (0.82-0.97 x the ranking time of the 100K
   * catalog by band, side by side; both collections' nDCG@10 the same to the fourth decimal in
   * process and to the last over HTTP, docs/benchmarks.md).
   */
  acc: new Float32Array(0),
  /** Per key, the best of one query word and its expansions while that word is scored. */
  best: new Float32Array(0),
  /** Keys `acc` holds a score for; keys `best` does; keys matched and accepted. */
  touched: new IntList(),
  bestTouched: new IntList(),
  /** Per key, a synonym phrase's term being scored, and how many of its terms a key holds so far (`phraseScores`). */
  other: new Float32Array(0),
  otherTouched: new IntList(),
  hits: new Uint8Array(0),
  matched: new IntList(),
  /** Vector score per key (cleared after each request). */
  vec: new KeyScores(),
  /** The keyword scores of the matches, for the hybrid head's threshold (reordered by it). */
  kws: new Float64Array(0),
  /** The matches that can be in the hybrid head (`strongestKeywordMatches`). */
  headKeys: new IntList(),
  /** Per key, what term feedback adds (cleared after each request). */
  boost: new KeyScores(),
  /**
   * Before vector feedback moves the query: each vector-only candidate's similarity to the query
   * as asked, and the best of every candidate's (cleared after each request; `asked` unused while
   * empty). Whether a vector-only candidate is a result is judged on these (`fused`).
   */
  asked: new KeyScores(),
  askedMax: 0,
  /** The fused score of each vector-scored key, in `vec.keys()` order (`fusedScores`; the latest call's). */
  fused: new Float64Array(0),
  /** Keys to score by similarity, and their similarities (`vectorStage`). */
  unscored: new IntList(),
  similarities: new Float64Array(0),
  /** `Keys.similarities` of a list of build and delta keys: each part's rows, where each came from, their similarities. */
  split: { rows: new Uint32Array(0), slots: new Uint32Array(0), rowAt: new Uint32Array(0), slotAt: new Uint32Array(0), got: new Float64Array(0) },
};

/** `a` when it holds `size` values, else a new zeroed array of at least 1.5 × its length (scratch grows rarely). */
function roomFor<A extends Float32Array<ArrayBuffer> | Float64Array<ArrayBuffer>>(a: A, size: number): A {
  if (a.length >= size) return a;
  const length = Math.max(size, Math.ceil(a.length * 1.5));
  return (a instanceof Float32Array ? new Float32Array(length) : new Float64Array(length)) as A;
}

/** How one request sees the build and the delta as keys. */
interface Keys {
  N: number;
  S: number;
  docOf(key: number): SearchDoc;
  /** The item id of a key, from typed arrays (no document read). */
  idOf(key: number): number;
  acceptIndexed(i: number): boolean;
  acceptSlot(s: number): boolean;
  accept(key: number): boolean;
  /** With a filter its columns read: the build's rows it may accept, in order (made when asked). */
  passingRows: (() => Uint32Array | undefined) | undefined;
  /** The same of the delta's live slots. */
  passingSlots: (() => Uint32Array | undefined) | undefined;
  /** The build's rows and the delta's slots that may be a query's neighbours: accepted, with a vector this page may score (`withoutVectorsSince`). */
  nearRow: (i: number) => boolean;
  nearSlot: (s: number) => boolean;
  /**
   * A later page's keys of items re-embedded since its first page, each with the build's row that
   * holds the vector the item had then (`withoutVectorsSince`): scored by that row, and offered
   * as neighbours by it (`nearestOfBoth`), where `nearSlot` refuses them.
   */
  olderRows?: readonly { key: number; row: number }[] | undefined;
  vectorOfKey(key: number): Float32Array | null;
  /** q · the vector of any key (0 without one). */
  similarity(q: Float32Array): (key: number) => number;
  /** The same of many keys at once: out[j] for keys[j], j < keys.length (to the bit). */
  similarities(q: Float32Array): (keys: ArrayLike<number>, out: Float64Array) => void;
}

function keysOf(index: SearchIndex, delta: PreparedDelta, r: RankRequest): Keys {
  const N = index.docs.length;
  const unfiltered = r.filter === NO_FILTER;
  const inactiveToo = r.includeInactive === true;
  const { active } = index;
  const { upTo } = r;
  // A later page ranked on a newer build than its first page's (that one gone): the build's items
  // created after the first page are hidden as the delta's are (below).
  const newerBuild = upTo !== undefined && upTo < index.largestId;
  const hiddenAt = newerBuild ? hiddenUpTo(index, delta.hiddenAt, upTo) : delta.hiddenAt;
  const anyMasked = delta.masked.size > 0 || newerBuild;
  const built = unfiltered
    ? undefined
    : filterReader(
        r.filter,
        N,
        () => index.columns(),
        (i) => index.docs[i] as SearchDoc,
      );
  const fresh = unfiltered
    ? undefined
    : filterReader(
        r.filter,
        delta.slotCount,
        () => delta.columns(),
        (s) => delta.docAt(s),
      );
  // A build row the request may take before its filter: not replaced or deleted by the delta, active unless inactive ones count.
  const rowEligible = (i: number) => hiddenAt[i] !== 1 && (inactiveToo || active[i] === 1);
  // The common case (no filter, active items only) reads typed arrays: a broad query accepts tens
  // of thousands of keyword matches this way.
  const acceptIndexed = !built
    ? inactiveToo
      ? (i: number) => hiddenAt[i] !== 1
      : anyMasked
        ? (i: number) => active[i] === 1 && hiddenAt[i] === 0
        : (i: number) => active[i] === 1
    : (i: number) => rowEligible(i) && built.test(i);
  // The same for the delta's slots: a large delta (right after an import) is as broad.
  const { active: activeSlot } = delta;
  // A slot of an item created after a first page is none of its later pages' (`upTo`).
  const live = upTo === undefined || delta.largestId <= upTo ? delta.live : rankedUpTo(delta, upTo);
  const acceptSlot = !fresh
    ? inactiveToo
      ? (s: number) => live[s] === 1
      : (s: number) => live[s] === 1 && activeSlot[s] === 1
    : (s: number) => live[s] === 1 && (inactiveToo || activeSlot[s] === 1) && fresh.test(s);
  // The build's rows and the delta's slots a filter may pass, when its columns tell: a selective
  // filter's neighbours are among them (`SearchIndex.nearest`, `PreparedDelta.nearest`).
  const passingRows = passingKeys(built, N, rowEligible);
  const passingSlots = passingKeys(fresh, delta.slotCount, (s) => live[s] === 1 && (inactiveToo || activeSlot[s] === 1));
  const keys: Keys = {
    N,
    S: delta.slotCount,
    passingRows,
    passingSlots,
    docOf: (key) => (key < N ? index.docs[key] : delta.docAt(key - N)) as SearchDoc,
    idOf: (key) => (key < N ? index.ids[key] : delta.ids[key - N]) as number,
    acceptIndexed,
    acceptSlot,
    accept: (key) => (key < N ? acceptIndexed(key) : acceptSlot(key - N)),
    nearRow: acceptIndexed,
    nearSlot: acceptSlot,
    vectorOfKey: (key) => (key < N ? index.vectorOf(key) : delta.vectorOf(key - N)),
    similarity: (q) => {
      const indexed = index.similarityTo(q);
      const fresh = delta.similarityTo(q);
      return (key) => (key < N ? indexed(key) : fresh(key - N));
    },
    similarities: (q) => {
      const indexed = index.similaritiesTo(q);
      const fresh = delta.similaritiesTo(q);
      return (list, out) => {
        const count = list.length;
        let all = true;
        for (let j = 0; j < count && all; j++) all = (list[j] as number) < N;
        if (all) {
          indexed(list, count, out);
          return;
        }
        // The build's keys and the delta's, each scored in batches, then put back in order.
        if (scratch.split.rows.length < count) {
          const room = 2 * count;
          scratch.split = { rows: new Uint32Array(room), slots: new Uint32Array(room), rowAt: new Uint32Array(room), slotAt: new Uint32Array(room), got: new Float64Array(room) };
        }
        const { rows, slots, rowAt, slotAt, got } = scratch.split;
        let nr = 0;
        let ns = 0;
        for (let j = 0; j < count; j++) {
          const key = list[j] as number;
          if (key < N) {
            rows[nr] = key;
            rowAt[nr++] = j;
          } else {
            slots[ns] = key - N;
            slotAt[ns++] = j;
          }
        }
        indexed(rows, nr, got);
        for (let r = 0; r < nr; r++) out[rowAt[r] as number] = got[r] as number;
        if (ns === 0) return;
        fresh(slots, ns, got);
        for (let r = 0; r < ns; r++) out[slotAt[r] as number] = got[r] as number;
      };
    },
  };
  return r.vectorsAsOf === undefined ? keys : withoutVectorsSince(keys, index, delta, r.vectorsAsOf);
}

/**
 * `keys` with the vectors saved after `asOf` (ms) taken out, as on a first page ranked before they
 * were saved (`RankRequest.vectorsAsOf`): a document whose vector was saved since scores with the
 * vector the build holds of it, when that one was saved by then (`builtVectorAsOf`: an item
 * re-embedded between pages, the vector the first page scored it by), else with its own when it
 * had one by then (`hadVectorBy`: created or first embedded since the build, its vector of then
 * overwritten; until 2026-12-07 it had none, and hits repeated or it was left out), else has no
 * vector score, is no neighbour and moves no feedback. Until 2026-12-07 a re-embedded item scored without a
 * vector too, where the first page had scored it with its old one: it fell past the cursor and
 * came again on a later page, and every hybrid score it no longer rescaled moved with it. Only the
 * delta holds such vectors (and a build newer than that page's view, when that page's is gone:
 * none older then); `keys` itself when none does (each knows its newest).
 */
function withoutVectorsSince(keys: Keys, index: SearchIndex, delta: PreparedDelta, asOf: number): Keys {
  const { N, S } = keys;
  let slots: Uint8Array | undefined;
  // Per such slot, the build's row of its item's vector of then (-1: none).
  let older: Int32Array | undefined;
  const olderRows: { key: number; row: number }[] = [];
  if (delta.latestVectorMs > asOf) {
    for (let s = 0; s < S; s++) {
      if (delta.live[s] !== 1) continue;
      const doc = delta.docAt(s);
      if (!doc.vector || vectorSavedMs(doc) <= asOf) continue;
      const row = builtVectorAsOf(index, doc.id, asOf);
      // Re-embedded since, its vector of then not in the build: its own (`hadVectorBy`).
      if (row === undefined && hadVectorBy(doc, asOf)) continue;
      (slots ??= new Uint8Array(S))[s] = 1;
      if (row === undefined) continue;
      (older ??= new Int32Array(S).fill(-1))[s] = row;
      olderRows.push({ key: N + s, row });
    }
  }
  let rows: Uint8Array | undefined;
  if (index.newestVectorMs > asOf) {
    for (let i = 0; i < N; i++) {
      const doc = index.docs[i] as SearchDoc;
      // Re-embedded since, in a newer build: its own, as in the delta (`hadVectorBy`).
      if (vectorSavedMs(doc) > asOf && !hadVectorBy(doc, asOf)) (rows ??= new Uint8Array(N))[i] = 1;
    }
  }
  if (!slots && !rows) return keys;
  const none = (key: number) => (key < N ? rows?.[key] === 1 : slots?.[key - N] === 1);
  // The build's row a key scores by instead of its own vector (-1: its own, or none).
  const rowOf = (key: number) => (older && key >= N ? (older[key - N] as number) : -1);
  return {
    ...keys,
    nearRow: rows ? (i) => rows[i] !== 1 && keys.acceptIndexed(i) : keys.acceptIndexed,
    nearSlot: slots ? (s) => slots[s] !== 1 && keys.acceptSlot(s) : keys.acceptSlot,
    ...(olderRows.length ? { olderRows } : {}),
    vectorOfKey: (key) => {
      const row = rowOf(key);
      return row >= 0 ? index.vectorOf(row) : none(key) ? null : keys.vectorOfKey(key);
    },
    similarity: (q) => {
      const of = keys.similarity(q);
      const built = older ? index.similarityTo(q) : undefined;
      return (key) => {
        if (!none(key)) return of(key);
        const row = rowOf(key);
        return built && row >= 0 ? built(row) : 0;
      };
    },
    similarities: (q) => {
      const of = keys.similarities(q);
      let built: ((i: number) => number) | undefined;
      return (list, out) => {
        of(list, out);
        for (let j = 0; j < list.length; j++) {
          const key = list[j] as number;
          if (!none(key)) continue;
          const row = rowOf(key);
          out[j] = row >= 0 ? (built ??= index.similarityTo(q))(row) : 0;
        }
      };
    },
  };
}

/** The build's rows the delta hides (`hiddenAt`), and those of items of ids above `upTo`. */
function hiddenUpTo(index: SearchIndex, hiddenAt: Uint8Array, upTo: number): Uint8Array {
  const out = hiddenAt.slice(0, index.docs.length);
  for (let i = 0; i < index.docs.length; i++) if ((index.ids[i] as number) > upTo) out[i] = 1;
  return out;
}

/** The delta's live slots, less those of items of ids above `upTo`. */
function rankedUpTo(delta: PreparedDelta, upTo: number): Uint8Array {
  const { live, ids, slotCount } = delta;
  const out = live.slice(0, slotCount);
  for (let s = 0; s < slotCount; s++) if ((ids[s] as number) > upTo) out[s] = 0;
  return out;
}

/** The keys below `count` that are `eligible` and that a filter's columns may pass (made when asked; undefined when its columns cannot tell). */
function passingKeys(reader: ReturnType<typeof filterReader> | undefined, count: number, eligible: (key: number) => boolean): (() => Uint32Array | undefined) | undefined {
  if (!reader) return undefined;
  return () => {
    const verdicts = reader.maybe();
    if (!verdicts) return undefined;
    const keys = new IntList();
    for (let k = 0; k < count; k++) if (verdicts[k] !== FAILS && eligible(k)) keys.push(k);
    return Uint32Array.from(keys.view());
  };
}

/**
 * A request's filter over one document set (a build's positions or a delta's slots): `test`, and
 * `maybe`, the columns' verdicts on every document of the set (`FAILS`: no chance to pass; none
 * without columns). Its first tests read the documents; once it has tested a 64th of the set (a
 * key's column, made the first time it is asked for and kept with the set, costs about as much
 * as reading every document once), it takes the verdicts of the whole set from the columns
 * (`DocFilter.over`: a pass of typed arrays per clause, or on a build's columns the rows of the
 * values an `eq` / `in` names and the buckets of a comparison's numbers) and asks the document
 * only where they cannot tell. A narrow query tests a few documents, a broad or selective one
 * tens of thousands (docs/benchmarks.md, "Filters read from columns", "Filter verdicts in one
 * pass").
 */
function filterReader(filter: DocFilter, count: number, columns: () => ColumnCache, docAt: (i: number) => SearchDoc): { test(i: number): boolean; maybe(): Uint8Array | undefined } {
  let verdicts: Uint8Array | undefined;
  let tested = 0;
  const over = filter.over;
  return {
    test: (i) => {
      if (verdicts === undefined) {
        if (over === undefined || ++tested <= count >> 6) return filter(docAt(i));
        verdicts = over(columns());
      }
      const v = verdicts[i];
      return v === PASSES || (v === ASK && filter(docAt(i)));
    },
    maybe: () => {
      if (over === undefined) return undefined;
      verdicts ??= over(columns());
      return verdicts;
    },
  };
}

/**
 * Ranks the index plus the delta for one request: BM25F keyword scores, vector similarity,
 * their fusion (hybrid: a convex combination of max-normalised scores), pseudo-relevance
 * feedback in vector space (the query vector moves toward its best few documents, or for a long
 * hybrid query toward those both lists agree on, and the vector part is scored again), term
 * feedback from those agreed documents, an optional taste boost from the user's profile, with
 * filters and activity applied to every candidate. Every score uses the build's and the delta's statistics
 * together (`PreparedDelta.stats`), and the delta's vectors as a build quantises them: a
 * document ranks the same whether it is in the delta or in the next build. Returns one page in
 * `byRank` order and the number of matches.
 */
export function rank(index: SearchIndex, delta: PreparedDelta, r: RankRequest, page: PageRequest): Ranked {
  delta.bind(index);
  const keys = keysOf(index, delta, r);
  const out = new ResultPage(page);
  // A query without a word (empty, spaces, punctuation or symbols only: "!!!") browses, as
  // search analytics counts it (`normaliseQuery`).
  if (r.query.trim() === '' || words(r.query).length === 0) {
    browse(keys, r, out);
    return { hits: out.hits(keys.docOf), total: out.total };
  }
  const touched = scratch.touched;
  try {
    const kw = keywordMatches(index, delta, keys, r);
    const vec = scratch.vec;
    vec.reserve(keys.N + keys.S);
    // Feedback from the documents both lists agree on: hybrid, unless the query names one of its
    // best matches (`agreedDocuments`).
    const agreeing = r.mode === 'hybrid' && kw.keys.length > 0;
    const stage = r.mode !== 'keyword' && r.queryVector ? vectorStage(index, delta, keys, r, r.queryVector, kw, vec, agreeing) : undefined;
    const fused = fusedScores(r, kw, vec);
    const feedback = stage?.agreed.length && RANKING.termFeedback.weight > 0 ? termFeedback(index, delta, keys, kw, fused, stage.agreed) : undefined;
    const near = r.mode !== 'semantic' ? proximity(index, delta, keys, r, kw, fused, feedback) : undefined;
    const named = near ? namesFirst(keys, r, kw, fused, near.boost, near.best) : { boost: feedback, above: undefined };
    emitAll(keys, r, kw, fused, stage?.headFrom, out, named.boost);
    return { hits: out.hits(keys.docOf), total: out.total, ...(named.above !== undefined ? { namedAbove: named.above } : {}) };
  } finally {
    // Zeroed key by key, or at once when a broad query touched much of the catalog.
    const size = keys.N + keys.S;
    if (touched.length > size / 8) scratch.acc.fill(0, 0, size);
    else for (const key of touched.view()) scratch.acc[key] = 0;
    scratch.vec.clear();
    scratch.boost.clear();
    scratch.asked.clear();
  }
}

/**
 * Browsing (an empty query): by the user's taste when known, else newest first (ids grow with
 * creation). The build's rows go from the last (a build holds its items in its store's order,
 * which is that of id), so once the page is full each older row only counts toward the total: a
 * browse of 100,000 items puts a page's worth into the page instead of all of them (in-process
 * 1.1-1.2 against 3.1-3.7 ms). Any order ranks alike, only slower; the delta's slots, in no order
 * of id, go after.
 */
function browse(keys: Keys, r: RankRequest, out: ResultPage): void {
  const taste = r.profile ? keys.similarity(r.profile) : undefined;
  const offer = (key: number) => {
    const id = keys.idOf(key);
    const score = taste ? Math.max(0, taste(key)) + 1e-12 * id : id;
    if (out.full(score)) out.count();
    else out.add(key, id, score);
  };
  const { N, S, acceptIndexed, acceptSlot } = keys;
  for (let i = N - 1; i >= 0; i--) if (acceptIndexed(i)) offer(i);
  for (let s = 0; s < S; s++) if (acceptSlot(s)) offer(N + s);
}

/** The accepted keyword matches (views of scratch memory) and the highest keyword score. */
interface KeywordMatches {
  keys: Int32Array;
  /** Of many matches, those at or above a sampled floor, in their order (`strongestKeywordMatches`); undefined for few. */
  above: Int32Array | undefined;
  max: number;
  /** A key's keyword score (0 without one). */
  of(key: number): number;
  /** The query's terms in the order of its words, stop words out (none in semantic mode). */
  terms: readonly string[];
  /** The same without the synonyms put in the query (`RankRequest.alternatives`): the pairs term proximity looks for. */
  asked: readonly string[];
  /**
   * The query's words that the catalog holds (`df` > 0), each with its prefix and typo expansions:
   * a document whose name holds a term of each is named by the query (`namedBy`). Made when
   * asked: only a hybrid query looking for agreed documents needs them.
   */
  known(): readonly (readonly string[])[];
}

/** Scores the query's terms into `scratch.acc` and lists the accepted matches. */
function keywordMatches(index: SearchIndex, delta: PreparedDelta, keys: Keys, r: RankRequest): KeywordMatches {
  const size = keys.N + keys.S;
  if (scratch.acc.length < size) {
    scratch.acc = roomFor(scratch.acc, size);
    scratch.best = new Float32Array(scratch.acc.length);
  }
  scratch.touched.clear();
  const expanded = r.mode !== 'semantic' ? index.expand(r.query, delta) : undefined;
  if (expanded) {
    if (r.alternatives?.length) asOneWord(expanded, r.alternatives, delta.stats());
    keywordScores(index, delta, expanded, r.phrases ?? [], delta.stats(), scratch.touched);
    stopWordNames(index, delta, keys, r.query, scratch.touched);
  }
  const acc = scratch.acc;
  const matched = scratch.matched;
  matched.clear();
  let max = 1e-9;
  const touched = scratch.touched.view();
  // Hybrid's head (`vectorHead`) is found among the matches at or above a floor that a sample of
  // them sets: listed here, while each match's score is read anyway, instead of in a second pass.
  const floor = r.mode === 'hybrid' ? (sampledFloor(acc, touched, HYBRID_VECTOR_LIMIT) ?? Infinity) : Infinity;
  const above = scratch.headKeys;
  above.clear();
  const { N, acceptIndexed, acceptSlot } = keys;
  const into = matched.room(touched.length);
  let count = 0;
  for (let j = 0; j < touched.length; j++) {
    const key = touched[j] as number;
    if (!(key < N ? acceptIndexed(key) : acceptSlot(key - N))) continue;
    into[count++] = key;
    const score = acc[key] as number;
    if (score > max) max = score;
    if (score >= floor) above.push(key);
  }
  matched.length = count;
  return {
    keys: matched.view(),
    above: floor === Infinity ? undefined : above.view(),
    max,
    of: (key) => (key < acc.length ? (acc[key] as number) : 0),
    terms: expanded?.sequence ?? [],
    asked: expanded ? withoutSynonyms(expanded.sequence, r.alternatives) : [],
    known: () => (expanded ? knownWords(expanded, delta.stats()) : []),
  };
}

/**
 * A query of stop words only ("The Who", "It", "Up") matches no indexed word (stop words are not
 * indexed; its last word only completes to longer words): the items whose names begin with its
 * words are its matches too, above its best keyword match's score (1 without one) by the share of
 * the name the query is, and names first ranks them above the rest. Found by their names' first
 * word (`namesBeginning`), in the build and in the delta alike (the build's copies the delta
 * replaced are turned away with the other matches).
 */
function stopWordNames(index: SearchIndex, delta: PreparedDelta, keys: Keys, query: string, touched: IntList): void {
  const asked = words(query);
  const first = asked[0];
  if (first === undefined || !asked.every((w) => STOP_WORDS.has(w))) return;
  const phrase = asked.join(' ');
  const acc = scratch.acc;
  // Over the matches the request accepts only, as `KeywordMatches.max`: the build's copies the
  // delta hides, filtered-out and inactive items would otherwise set these scores (a build of the
  // same items has no hidden copies).
  let best = 0;
  for (const key of touched.view()) if ((acc[key] as number) > best && keys.accept(key)) best = acc[key] as number;
  if (!(best > 0)) best = 1;
  const found: { key: number; name: string }[] = [];
  const look = (key: number, name: string) => {
    if ((name === phrase || name.startsWith(`${phrase} `)) && keys.accept(key)) found.push({ key, name });
  };
  const built = index.namesBeginning(first);
  for (let j = 0; j < built.keys.length; j++) look(built.keys[j] as number, built.names[j] as string);
  const fresh = delta.namesBeginning(first);
  for (let j = 0; j < fresh.keys.length; j++) look(keys.N + (fresh.keys[j] as number), fresh.names[j] as string);
  // Stop words that begin more names than the bound ("the" alone, typed on the way to a name) name
  // none of them: only a name that is the query counts then, which keeps the cost of such a query
  // what it was without them.
  const named = found.length > RANKING.names.stopWordNames ? found.filter((f) => f.name === phrase) : found;
  for (const { key, name } of named) {
    // Above every completion of its last word ("Hercules" for "her"), the more so the larger the
    // share of the name the query is: "Up (2009)" before "Up Close and Personal".
    const score = best * (1 + asked.length / name.split(' ').length);
    if (acc[key] === 0) touched.push(key);
    if ((acc[key] as number) < score) acc[key] = score;
  }
}

/**
 * One-word synonyms as one word of the query (`RankRequest.alternatives`): each, with its own
 * prefix and typo expansions, stands for the query's term that brought it, so a document scores
 * the best of the word and its synonyms, a synonym at most the word's IDF (`keywordScores`), as a
 * word and its expansions do. Those a trigger of several terms brought stand for the most
 * frequent of them, so each scores at most that one's IDF (Lucene's SynonymQuery takes the
 * group's largest document frequency). Until 2026-12-05 each synonym scored as a word of its own:
 * an item holding three synonyms of "sofa" outranked one holding "sofa".
 */
function asOneWord(expanded: Expansion, alternatives: readonly Alternatives[], stats: CollectionStats): void {
  const { standsFor } = expanded;
  const own = (t: string) => expanded.has(t) && !standsFor.has(t);
  const commoner = (a: string, b: string) => (stats.df(b) > stats.df(a) || (stats.df(b) === stats.df(a) && byTerm(b, a) < 0) ? b : a);
  for (const { word, terms } of alternatives) {
    const present = terms.filter(own);
    // A word no document holds stands for nothing here: its synonyms are what the catalog has.
    const head = word !== undefined && own(word) && stats.df(word) > 0 ? word : present.reduce(commoner, present[0] as string);
    for (const t of present) {
      if (t === head) continue;
      for (const [x, w] of standsFor) if (w === t) standsFor.set(x, head);
      standsFor.set(t, head);
    }
  }
}

/** A query's terms less the synonyms put in it. */
function withoutSynonyms(sequence: readonly string[], alternatives: readonly Alternatives[] | undefined): readonly string[] {
  if (!alternatives?.length) return sequence;
  const synonyms = new Set(alternatives.flatMap((a) => a.terms));
  return sequence.filter((t) => !synonyms.has(t));
}

/** `KeywordMatches.known`: the query's own terms the catalog holds, each with the expansions that stand in for it. */
function knownWords(expanded: Expansion, stats: CollectionStats): string[][] {
  const byWord = new Map<string, string[]>();
  for (const t of expanded.keys()) {
    if (!expanded.standsFor.has(t) && stats.df(t) > 0) byWord.set(t, [t]);
  }
  for (const [t, word] of expanded.standsFor) byWord.get(word)?.push(t);
  return [...byWord.values()];
}

/**
 * Whether the query names the document: its name holds every word of the query that the catalog
 * holds (the word, or one of its prefix or typo expansions). Words the catalog does not hold (a
 * typo, half a word, a word of no item) name nothing: the others decide.
 */
function namedBy(doc: SearchDoc, known: ReturnType<KeywordMatches['known']>): boolean {
  if (known.length === 0) return false;
  const { terms: ts, tf, nameJoined } = analysedTerms(doc);
  const inName = new Set<string>(nameJoined);
  for (let i = 0; i < ts.length; i++) if ((tf[3 * i] as number) > 0) inName.add(ts[i] as string);
  return known.every((word) => word.some((t) => inName.has(t)));
}

/**
 * Adds the BM25F keyword scores of the build's documents and the delta's for the expanded query
 * terms into `scratch.acc`, recording each key touched. A query word with prefix or typo
 * expansions adds the best of the word's own score and its expansions' (each at most its weight
 * times the word's IDF), never their sum; other terms add up.
 */
function keywordScores(index: SearchIndex, delta: PreparedDelta, expanded: Expansion, phrases: readonly string[], stats: CollectionStats, touched: IntList): void {
  const N = index.docs.length;
  const { acc, best, bestTouched } = scratch;
  const standsFor = expanded.standsFor;
  // Units: a word alone, or a word with its expansions; each in the order of its first term.
  const units = new Map<string, string[]>();
  for (const t of expanded.keys()) {
    const word = standsFor.get(t) ?? t;
    const u = units.get(word);
    if (u) u.push(t);
    else units.set(word, [t]);
  }
  // What a synonym phrase's term weighs at most: the IDF of the query's rarest word an item holds
  // (Infinity when it holds none), as an expansion weighs at most its word's (`phraseScores`).
  let phraseCap = 0;
  for (const word of units.keys()) if (stats.df(word) > 0) phraseCap = Math.max(phraseCap, idfIn(stats, word));
  if (expanded.words >= RANKING.requestMinWords) for (const word of budgeted(units, stats)) units.delete(word);
  const expandedWord = (ts: string[]) => ts.length > 1 || standsFor.has(ts[0] as string);
  // The words with expansions are scored first: the first of them keeps its best score per key
  // straight in the (still empty) accumulator, instead of in `best` and then added to it. A broad
  // query's half-typed last word has tens of thousands of such keys. (The order is the same
  // wherever a document is, build or delta.)
  const ordered = [...units].sort((a, b) => Number(expandedWord(b[1])) - Number(expandedWord(a[1])));
  const indexNorms = index.norms(stats);
  let deltaNorms: FieldNorms | undefined;
  const score = (t: string, widf: number, target: Float32Array, list: IntList, max: boolean) => {
    const p = index.postingsOf(t);
    if (p) scorePostings(p, indexNorms, 0, widf, target, list, max);
    const q = delta.postingsOf(t);
    // Its dead slots (replaced documents) are skipped while there are any: a list of none scores
    // its kept values without a check per posting (every match is accepted by its live slot later).
    if (q) scorePostings(q, (deltaNorms ??= delta.norms()), N, widf, target, list, max, delta.hasDeadSlots ? delta.live : undefined);
  };
  for (const [word, ts] of ordered) {
    if (!expandedWord(ts)) {
      const t = ts[0] as string;
      score(t, (expanded.get(t) as number) * idfIn(stats, t), acc, touched, false);
      continue;
    }
    // An expansion's IDF is capped at its word's when the word is known.
    const cap = stats.df(word) > 0 ? idfIn(stats, word) : Infinity;
    const weightOf = (t: string) => (expanded.get(t) as number) * (t === word ? idfIn(stats, t) : Math.min(idfIn(stats, t), cap));
    if (touched.length === 0) {
      for (const t of ts) score(t, weightOf(t), acc, touched, true);
      continue;
    }
    bestTouched.clear();
    for (const t of ts) score(t, weightOf(t), best, bestTouched, true);
    for (const key of bestTouched.view()) {
      if (acc[key] === 0) touched.push(key);
      acc[key] = (acc[key] as number) + (best[key] as number);
      best[key] = 0;
    }
  }
  // Phrases, cheapest first (their terms' postings), while they fit in the postings a long query's
  // words are held to (RANKING.maxPostings), the cheapest always: 32 phrases of common words
  // would otherwise read a large catalog's postings 32 times over.
  const costed = phrases.map((p) => {
    const ts = phraseTerms(p);
    return { p, ts, cost: ts.reduce((n, t) => n + stats.df(t), 0) };
  });
  costed.sort((a, b) => a.cost - b.cost || byTerm(a.p, b.p));
  let spent = 0;
  for (const { ts, cost } of costed) {
    if (spent > 0 && spent + cost > RANKING.maxPostings) break;
    spent += cost;
    phraseScores(ts, stats, score, touched, phraseCap || Infinity);
  }
}

/**
 * A synonym's phrase scored as one word of the query: the mean of its terms' BM25F scores, for the
 * documents that hold all of them only ("television set" scores no "Cookware set"), each term's
 * IDF at most `cap` (the query's rarest known word's): a phrase of rarer terms than the words
 * asked, such as a Japanese word's character pairs for `couch`, ranked an item holding it above
 * the items holding the word asked for (until 2026-12-07). Its terms go rarest first (the fewest
 * documents carried from one to the next), the same wherever a document is, build or delta.
 */
function phraseScores(
  terms: readonly string[],
  stats: CollectionStats,
  score: (t: string, widf: number, target: Float32Array, list: IntList, max: boolean) => void,
  touched: IntList,
  cap: number,
): void {
  const ts = [...terms].sort((a, b) => stats.df(a) - stats.df(b) || byTerm(a, b));
  const m = ts.length;
  if (m === 0 || stats.df(ts[0] as string) === 0) return;
  const size = scratch.acc.length;
  if (scratch.other.length < size) {
    scratch.other = new Float32Array(size);
    scratch.hits = new Uint8Array(size);
  }
  const { acc, best, bestTouched, other, otherTouched, hits } = scratch;
  bestTouched.clear();
  const weight = (t: string) => Math.min(idfIn(stats, t), cap) / m;
  score(ts[0] as string, weight(ts[0] as string), best, bestTouched, false);
  for (const key of bestTouched.view()) hits[key] = 1;
  for (let i = 1; i < m; i++) {
    otherTouched.clear();
    score(ts[i] as string, weight(ts[i] as string), other, otherTouched, false);
    for (const key of otherTouched.view()) {
      if (hits[key] === i) {
        best[key] = (best[key] as number) + (other[key] as number);
        hits[key] = i + 1;
      }
      other[key] = 0;
    }
  }
  for (const key of bestTouched.view()) {
    if (hits[key] === m) {
      if (acc[key] === 0) touched.push(key);
      acc[key] = (acc[key] as number) + (best[key] as number);
    }
    best[key] = 0;
    hits[key] = 0;
  }
}

const idfIn = (stats: CollectionStats, t: string): number => idfOf(stats.n, stats.df(t));

/**
 * The words of a long query (RANKING.requestMinWords or more) left out by the postings budget
 * (RANKING.maxPostings): words (with their expansions) are kept rarest first while their postings
 * fit in it, the rarest always. A long query of a large catalog's common words would otherwise
 * score, and match, most of the catalog; the words left out are the ones that weigh least (lowest
 * IDF). A shorter query keeps every word, a half-typed last one included. Counts are the build's
 * and the delta's together, so a build leaves out the same words as its delta.
 */
function budgeted(units: ReadonlyMap<string, string[]>, stats: CollectionStats): string[] {
  const cost = new Map<string, number>();
  let total = 0;
  for (const [word, ts] of units) {
    let n = 0;
    for (const t of ts) n += stats.df(t);
    cost.set(word, n);
    total += n;
  }
  if (total <= RANKING.maxPostings) return [];
  const rarestFirst = [...cost].sort((a, b) => a[1] - b[1] || byTerm(a[0], b[0]));
  const out: string[] = [];
  let kept = 0;
  for (const [word, n] of rarestFirst) {
    if (kept > 0 && kept + n > RANKING.maxPostings) out.push(word);
    else kept += n;
  }
  return out;
}

/** The text a request's query is ranked by: a long query without its request words (RANKING.requestMinWords). */
export const rankingQuery = (query: string): string => withoutRequestWords(query, RANKING.requestMinWords);

/**
 * Vector scores into `vec`: the query's neighbours (unless hybrid has plenty of keyword matches)
 * and the head of the keyword matches, then scored again with the query moved (Rocchio feedback)
 * toward the documents both lists agree on when `agreeing` finds any, else toward its best few.
 * Answers the agreed documents and, for hybrid with many keyword matches, the keyword score the
 * vector-scored head starts at.
 */
function vectorStage(
  index: SearchIndex,
  delta: PreparedDelta,
  keys: Keys,
  r: RankRequest,
  queryVector: Float32Array,
  kw: KeywordMatches,
  vec: KeyScores,
  agreeing: boolean,
): { headFrom: number | undefined; agreed: number[] } {
  const { head, headFrom } = vectorHead(r.mode, keys, kw.keys, kw.above);
  // With plenty of keyword matches, hybrid scores their strongest with vectors instead of also
  // probing the vector index for documents without a keyword match.
  const probe = r.mode === 'semantic' || kw.keys.length < HYBRID_VECTOR_LIMIT;
  if (probe) nearestOfBoth(index, delta, keys, queryVector, vec);
  // Indexed loops here and below: a for-of over a typed array allocated an iterator result per key (heap profile).
  // Scored in batches (`Keys.similarities`), into scratch memory.
  const unscored = scratch.unscored;
  unscored.clear();
  for (let i = 0; i < head.length; i++) if (!vec.has(head[i] as number)) unscored.push(head[i] as number);
  const first = (scratch.similarities = roomFor(scratch.similarities, keys.N + keys.S));
  const firstKeys = unscored.view();
  keys.similarities(queryVector)(firstKeys, first);
  for (let j = 0; j < firstKeys.length; j++) vec.set(firstKeys[j] as number, first[j] as number);
  // Judged by the similarities to the query as asked, before feedback moves it.
  const agreed = agreeing ? agreedDocuments(keys, r, kw, vec) : [];
  if (RANKING.feedbackWeight > 0) {
    const q2 = movedToward(queryVector, agreed.map(keys.vectorOfKey)) ?? feedbackQuery(keys, r, queryVector, kw, vec, headFrom === undefined ? kw.keys : head);
    if (q2) {
      // The same documents, scored again with the moved query; a vector-only one's similarity to
      // the query as asked is kept: feedback orders the results, it does not make one. A match by
      // similarity alone is then one whatever the filter: the documents feedback moves toward are
      // among the filtered ones, so the moved query would depend on the filter (a facet's count
      // over an unfiltered search would not be found by filtering to it).
      const scored = vec.keys();
      const second = scratch.similarities;
      keys.similarities(q2)(scored, second);
      const asked = scratch.asked;
      asked.reserve(keys.N + keys.S);
      scratch.askedMax = vec.max(1e-9);
      for (let i = 0; i < scored.length; i++) {
        const key = scored[i] as number;
        if (kw.of(key) === 0) asked.set(key, vec.scoreOf(key));
        vec.set(key, second[i] as number);
      }
    }
  }
  return { headFrom, agreed };
}

/**
 * The documents both lists agree on (`RANKING.agreement`): in the order of a first fusion's best,
 * the first few that are also among the best by keyword score and by vector similarity. Every key
 * that can be among the fusion's best has a vector score (the hybrid head, or every keyword match
 * when they are few, and the neighbours), and the best keyword matches are among them (the head
 * holds the strongest).
 */
function agreedDocuments(keys: Keys, r: RankRequest, kw: KeywordMatches, vec: KeyScores): number[] {
  const { agree, docs } = RANKING.agreement;
  const byKeyword = new TopK(agree);
  const byVector = new TopK(agree);
  const scored = vec.keys();
  for (let i = 0; i < scored.length; i++) {
    const key = scored[i] as number;
    const id = keys.idOf(key);
    byVector.push(key, vec.scoreOf(key), id);
    const k = kw.of(key);
    if (k > 0) byKeyword.push(key, k, id);
  }
  // A query that names one of its best keyword matches asks for that document (a product by its
  // name), not for what its neighbours are about: none is agreed on, so no term feedback; the
  // query vector still moves toward the first fusion's best, as with no agreed document (without
  // that move both collections and Last.fm's known-item queries ranked worse, MovieLens's as well
  // as with it: docs/benchmarks.md).
  const inKeyword = new Set(byKeyword.keyView());
  const known = kw.known();
  for (const key of inKeyword) if (namedBy(keys.docOf(key), known)) return [];
  // In both lists' best (at most `agree` keys): those among the fusion's best `pool`, in its order.
  // Each is there when fewer than `pool` keys rank above it, which one pass counts (instead of
  // keeping the fusion's best `pool` to look them up).
  const fused = fusedScores(r, kw, vec);
  const both: { key: number; f: number; id: number; above: number }[] = [];
  for (const key of byVector.keyView()) {
    const f = inKeyword.has(key) ? fused.of(key) : Number.NaN;
    if (!Number.isNaN(f)) both.push({ key, f, id: keys.idOf(key), above: 0 });
  }
  if (both.length === 0) return [];
  const { scores } = fused;
  for (let i = 0; i < scored.length; i++) {
    const f = scores[i] as number;
    if (Number.isNaN(f)) continue;
    const id = keys.idOf(scored[i] as number);
    for (const c of both) if (f > c.f || (f === c.f && id < c.id)) c.above++;
  }
  return both
    .filter((c) => c.above < RANKING.agreement.pool)
    .sort((a, b) => b.f - a.f || a.id - b.id)
    .slice(0, docs)
    .map((c) => c.key);
}

/**
 * The best `RANKING.agreement.pool` keys of the final fusion (ties to the lower item id). Every
 * key that can be among them has a vector score (`agreedDocuments`).
 */
function fusionBest(keys: Keys, fused: FusedScores): number[] {
  const first = new TopK(RANKING.agreement.pool);
  const { keys: scored, scores } = fused;
  for (let i = 0; i < scored.length; i++) {
    const f = scores[i] as number;
    if (!Number.isNaN(f)) first.push(scored[i] as number, f, keys.idOf(scored[i] as number));
  }
  return first.bestKeys();
}

/**
 * Hybrid gives vector scores to the strongest keyword matches (the head: HYBRID_VECTOR_LIMIT of
 * them, ties at the last place to the lower item ids); the tail keeps its keyword score. Bounded
 * whatever the query: a one-word query over a catalog whose names are all equally long ties
 * thousands of matches, which would otherwise all be scored twice.
 */
function vectorHead(mode: SearchMode, keys: Keys, kwKeys: Int32Array, above: Int32Array | undefined): { head: ArrayLike<number> & Iterable<number>; headFrom: number | undefined } {
  if (mode === 'hybrid' && kwKeys.length > HYBRID_VECTOR_LIMIT) {
    const acc = scratch.acc;
    const { keys: candidates, threshold } = strongestKeywordMatches(acc, kwKeys, HYBRID_VECTOR_LIMIT, above);
    const strongest: number[] = [];
    const tied: number[] = [];
    for (const key of candidates) {
      const k = acc[key] as number;
      if (k > threshold) strongest.push(key);
      else if (k === threshold) tied.push(key);
    }
    const room = HYBRID_VECTOR_LIMIT - strongest.length;
    if (tied.length <= room) strongest.push(...tied);
    else {
      // The `room` lowest ids of the tied: ids are unique, so the cut is exact.
      const negIds = Float64Array.from(tied, (key) => -keys.idOf(key));
      const cut = -kthLargest(negIds, room);
      for (const key of tied) if (keys.idOf(key) <= cut) strongest.push(key);
    }
    return { head: strongest, headFrom: threshold };
  }
  return { head: mode === 'hybrid' ? kwKeys : [], headFrom: undefined };
}

/** Matches sampled (evenly spaced) to find where the strongest few start. */
const HEAD_SAMPLE = 2048;

/**
 * Of more than 8 × HEAD_SAMPLE keys, the score that about 3k of them are expected to reach, read
 * from an evenly spaced sample of HEAD_SAMPLE; undefined for fewer keys.
 */
function sampledFloor(acc: Float32Array, keys: Int32Array, k: number): number | undefined {
  const n = keys.length;
  if (n <= 8 * HEAD_SAMPLE) return undefined;
  const sample = (scratch.kws = roomFor(scratch.kws, HEAD_SAMPLE)).subarray(0, HEAD_SAMPLE);
  const step = n / HEAD_SAMPLE;
  for (let j = 0; j < HEAD_SAMPLE; j++) sample[j] = acc[keys[Math.floor(j * step)] as number] as number;
  return kthLargest(sample, Math.ceil((3 * k * HEAD_SAMPLE) / n));
}

/**
 * The k-th largest keyword score of the matches (`threshold`) and, in their order, the matches
 * that can score at least that (a superset of those that do): every match when they are few.
 * Of many, a sampled floor (`sampledFloor`) first bounds the threshold from below: only matches
 * at or above it are kept and searched, `above` when the caller listed them already (in the
 * matches' order); when fewer than k reach it (a sample far off), all of them are. The threshold
 * is exact either way: a broad query's 90,000 matches are copied and searched as about 1,500.
 */
export function strongestKeywordMatches(acc: Float32Array, kwKeys: Int32Array, k: number, above?: Int32Array): { keys: Int32Array; threshold: number } {
  const n = kwKeys.length;
  let kept = above;
  if (!kept || kept.length < k) {
    const floor = sampledFloor(acc, kwKeys, k);
    if (floor !== undefined) {
      const list = scratch.headKeys;
      list.clear();
      for (let j = 0; j < n; j++) {
        const key = kwKeys[j] as number;
        if ((acc[key] as number) >= floor) list.push(key);
      }
      kept = list.view();
    }
  }
  const keys = kept && kept.length >= k ? kept : kwKeys;
  const kws = (scratch.kws = roomFor(scratch.kws, keys.length));
  for (let j = 0; j < keys.length; j++) kws[j] = acc[keys[j] as number] as number;
  return { keys, threshold: kthLargest(kws.subarray(0, keys.length), k) };
}

/** Adds to `m` the nearest of the build's and of the delta's documents: together, the nearest of both. */
function nearestOfBoth(index: SearchIndex, delta: PreparedDelta, keys: Keys, q: Float32Array, m: KeyScores): void {
  const { N, S } = keys;
  const k = RANKING.vectorCandidates;
  const fromIndex = index.nearest(q, k, keys.nearRow, keys.passingRows);
  const fromDelta = S ? delta.nearest(q, k, keys.nearSlot, keys.passingSlots) : undefined;
  // A later page's items re-embedded since its first page, by the build's vectors of them
  // (`Keys.olderRows`), each scored exactly: they are a few.
  const older = keys.olderRows?.filter(({ key }) => keys.accept(key)) ?? [];
  const built = older.length ? index.similarityTo(q) : undefined;
  if (fromIndex.size + (fromDelta?.size ?? 0) + older.length <= k) {
    fromIndex.forEach((i, s) => m.set(i, s));
    fromDelta?.forEach((slot, s) => m.set(N + slot, s));
    if (built) for (const { key, row } of older) m.set(key, built(row));
    return;
  }
  const both = new TopK(k);
  fromIndex.forEach((i, s) => both.push(i, s, index.ids[i] as number));
  fromDelta?.forEach((slot, s) => both.push(N + slot, s, delta.ids[slot] as number));
  if (built) for (const { key, row } of older) both.push(key, built(row), keys.idOf(key));
  both.forEachBest((key, s) => m.set(key, s));
}

/**
 * Rocchio: the query vector moved toward the best few documents of a first fusion (ties to the
 * lower item id: a delta document's key changes when it is re-read, its id does not), or null
 * when none of them has a vector. `candidates`: the keyword matches that can be among the best.
 */
function feedbackQuery(keys: Keys, r: RankRequest, queryVector: Float32Array, kw: KeywordMatches, vec: KeyScores, candidates: Iterable<number>): Float32Array | null {
  const top = new TopK(RANKING.feedbackDocs);
  const fusedOf = fusion(r, kw, vec);
  const consider = (key: number) => {
    const f = fusedOf(key);
    if (!Number.isNaN(f)) top.push(key, f, keys.idOf(key));
  };
  // Below the head, a keyword match has no vector score and a keyword score no higher than any
  // head document's (tied ones have higher ids), so it cannot be among the best: only the head
  // is considered.
  for (const key of candidates) consider(key);
  // In semantic mode the neighbours are the evidence; in hybrid only keyword matches are.
  if (r.mode === 'semantic' || kw.keys.length === 0) for (const key of vec.keys()) if (kw.of(key) === 0) consider(key);
  return movedToward(queryVector, top.bestKeys().map(keys.vectorOfKey));
}

/** Rocchio: the query vector plus `feedbackWeight` × the mean of the documents' vectors (those that have one), normalised; null when none has. */
function movedToward(queryVector: Float32Array, vectors: (Float32Array | null)[]): Float32Array | null {
  const tops = vectors.filter((v): v is Float32Array => v !== null);
  if (!tops.length) return null;
  const q2 = Float32Array.from(queryVector);
  for (const v of tops) for (let k = 0; k < q2.length; k++) q2[k] = (q2[k] as number) + (RANKING.feedbackWeight * (v[k] as number)) / tops.length;
  return normalize(q2);
}

/**
 * Term feedback (`RANKING.termFeedback`): the agreed documents' most informative terms (Bo1: a
 * term's frequency in them against its document frequency), whose BM25F, as a share of the
 * largest, is added to the fusion's best documents. Answers what it adds per key. Every input is
 * the same whether a document is in the build or the delta (the statistics of both, its analysed
 * text, the one BM25F), so a document ranks the same in either.
 */
function termFeedback(index: SearchIndex, delta: PreparedDelta, keys: Keys, kw: KeywordMatches, fused: FusedScores, agreed: number[]): KeyScores | undefined {
  const { terms: wanted, weight } = RANKING.termFeedback;
  if (wanted <= 0) return undefined;
  // The fusion's best, with the moved query's similarities: the documents the terms can lift.
  const best = fusionBest(keys, fused);
  // Bo1 over the agreed documents' terms (each field's frequency by its boost), the query's own left out.
  const stats = delta.stats();
  const own = new Set(kw.terms);
  const boosts = FIELD_NAMES.map((f) => RANKING.fields[f as Field].boost);
  const freq = new Map<string, number>();
  for (const key of agreed) {
    const { terms: ts, tf } = analysedTerms(keys.docOf(key));
    for (let i = 0; i < ts.length; i++) {
      const t = ts[i] as string;
      if (own.has(t)) continue;
      freq.set(t, (freq.get(t) ?? 0) + (tf[3 * i] as number) * (boosts[0] as number) + (tf[3 * i + 1] as number) * (boosts[1] as number) + (tf[3 * i + 2] as number) * (boosts[2] as number));
    }
  }
  // The `wanted` most informative, best first (ties to the term first in order): kept sorted as
  // they come, instead of sorting every candidate (a long document pair has hundreds).
  const chosen: [string, number][] = [];
  const before = (a: [string, number], b: [string, number]) => a[1] > b[1] || (a[1] === b[1] && byTerm(a[0], b[0]) < 0);
  for (const [t, f] of freq) {
    const df = stats.df(t);
    if (df === 0) continue;
    const pn = df / stats.n;
    const c: [string, number] = [t, f * Math.log2((1 + pn) / pn) + Math.log2(1 + pn)];
    if (chosen.length === wanted && !before(c, chosen[wanted - 1] as [string, number])) continue;
    let at = Math.min(chosen.length, wanted - 1);
    if (chosen.length < wanted) chosen.push(c);
    while (at > 0 && before(c, chosen[at - 1] as [string, number])) {
      chosen[at] = chosen[at - 1] as [string, number];
      at--;
    }
    chosen[at] = c;
  }
  const top = chosen[0]?.[1];
  if (!top) return undefined;
  // Their BM25F for the fusion's best only: each one's posting found by binary search (a list
  // holds its documents in order), scored as a full pass over the list would score it.
  const sums = new Float64Array(best.length);
  const indexNorms = index.norms(stats);
  let deltaNorms: FieldNorms | undefined;
  const { N } = keys;
  for (const [t, w] of chosen) {
    const widf = (w / top) * idfOf(stats.n, stats.df(t));
    const p = index.postingsOf(t);
    const q = delta.postingsOf(t);
    best.forEach((key, k) => {
      const list = key < N ? p : q;
      const j = list ? postingOf(list, key < N ? key : key - N) : -1;
      if (list && j >= 0) sums[k] = (sums[k] as number) + postingScore(list, j, key < N ? indexNorms : (deltaNorms ??= delta.norms()), widf);
    });
  }
  let most = 0;
  for (const f of sums) if (f > most) most = f;
  if (!(most > 0)) return undefined;
  const out = scratch.boost;
  out.reserve(keys.N + keys.S);
  best.forEach((key, k) => {
    const f = sums[k] as number;
    if (f > 0) out.set(key, (weight * f) / most);
  });
  return out;
}

/**
 * Term proximity (`RANKING.proximity`; the sequential dependence model's ordered pairs, Metzler
 * and Croft 2005): among the `pool` best results so far (by their fused score with `boost`), each
 * pair of adjacent query words (stems, stop words out) found adjacent in the name or description
 * adds BM25F's saturated frequency of the pair (the fields' weights and norms of single words),
 * times the IDF of its rarer word: a lower bound of the pair's own IDF (a document holding the
 * pair holds both words; the index keeps no statistics of pairs). Each one's sum, as a share of the
 * largest, adds `weight` × the best score: the order among those best changes, and no result
 * beyond them can pass one of them. Read from each document's text (`fieldPairs`), so a document
 * gets the same in a build and in the delta. Answers `boost` with these additions (or them alone).
 */
function proximity(
  index: SearchIndex,
  delta: PreparedDelta,
  keys: Keys,
  r: RankRequest,
  kw: KeywordMatches,
  fused: FusedScores,
  boost: KeyScores | undefined,
): { boost: KeyScores | undefined; best?: Candidate[] } {
  const qs = kw.asked;
  const { weight, pool } = RANKING.proximity;
  if (weight <= 0) return { boost };
  // The query's adjacent pairs (distinct), as codes, each with its rarer word's IDF.
  const codes: number[] = [];
  const pairIdf: number[] = [];
  const stats = delta.stats();
  for (let i = 0; i + 1 < qs.length; i++) {
    const a = qs[i] as string;
    const b = qs[i + 1] as string;
    const code = pairCode(a, b);
    const df = Math.min(stats.df(a), stats.df(b));
    if (a === b || df === 0 || codes.includes(code)) continue;
    codes.push(code);
    pairIdf.push(idfOf(stats.n, df));
  }
  if (pairIdf.length === 0) return { boost };
  const candidates = bestSoFar(keys, r, kw, fused, boost, pool);
  // Names first looks at the same best results (when its pool is this one's), with these additions.
  const same = pool === RANKING.names.pool;
  if (candidates.length === 0) return { boost, ...(same ? { best: candidates } : {}) };
  const indexNorms = index.norms(stats);
  let deltaNorms: FieldNorms | undefined;
  let top = 0;
  let most = 0;
  // The codes ascending (`at`: each one's place in `codes`), to count them against a document's in one pass.
  const at = Int32Array.from(codes.keys()).sort((x, y) => (codes[x] as number) - (codes[y] as number));
  const ascending = Float64Array.from(at, (j) => codes[j] as number);
  const inName = new Float64Array(codes.length);
  const inDescription = new Float64Array(codes.length);
  const sums = candidates.map(({ key, score }) => {
    if (score > top) top = score;
    const [name, description] = fieldPairs(keys.docOf(key));
    const [w0, w1] = (key < keys.N ? indexNorms : (deltaNorms ??= delta.norms())).w;
    const i = key < keys.N ? key : key - keys.N;
    inName.fill(0);
    inDescription.fill(0);
    addCounts(name, ascending, at, inName);
    addCounts(description, ascending, at, inDescription);
    let sum = 0;
    for (let j = 0; j < codes.length; j++) {
      const x = (inName[j] as number) * (w0[i] as number) + (inDescription[j] as number) * (w1[i] as number);
      if (x > 0) sum += (pairIdf[j] as number) * (x / (RANKING.k1 + x));
    }
    if (sum > most) most = sum;
    return sum;
  });
  if (!(most > 0)) return { boost, ...(same ? { best: candidates } : {}) };
  const out = boost ?? scratch.boost;
  out.reserve(keys.N + keys.S);
  candidates.forEach(({ key }, k) => {
    const add = (weight * top * (sums[k] as number)) / most;
    if (add > 0) out.set(key, (out.get(key) ?? 0) + add);
  });
  // Their scores as `bestSoFar` would read them now, to the bit; no other result passes them
  // (each only rose, and one tied with the last of them lost to it by its higher id before).
  return { boost: out, ...(same ? { best: candidates.map(({ key, base }) => ({ key, base, score: base + added(out, key) })) } : {}) };
}

/** One of the best results so far: its score with the boost, and before it (`base`). */
interface Candidate {
  key: number;
  score: number;
  base: number;
}

/**
 * The best `pool` results so far, by their fused score with `boost` (ties to the lower item id,
 * as the page orders them), each with that score: in keyword mode the keyword matches; in hybrid
 * the vector-scored keys, or the keyword matches when there is no query vector (nothing then has
 * a vector score).
 */
function bestSoFar(keys: Keys, r: RankRequest, kw: KeywordMatches, fused: FusedScores, boost: KeyScores | undefined, pool: number): Candidate[] {
  const best = new TopK(pool);
  // A key's score before the boost: the keyword score, or the fused one.
  const acc = scratch.acc;
  const baseOf = r.mode === 'keyword' ? (key: number) => acc[key] as number : (key: number) => fused.of(key);
  const offer = (key: number, score: number) => {
    // Most of a broad query's matches are turned away by one comparison, without their id.
    if (!best.full || score >= best.worstScore) best.push(key, score, keys.idOf(key));
  };
  if (r.mode === 'keyword') {
    for (const key of kw.keys) offer(key, (acc[key] as number) + added(boost, key));
  } else {
    const { keys: scored, scores } = fused;
    if (scored.length > 0) {
      for (let i = 0; i < scored.length; i++) {
        const f = scores[i] as number;
        if (!Number.isNaN(f)) offer(scored[i] as number, f + added(boost, scored[i] as number));
      }
    } else {
      for (const key of kw.keys) {
        const f = fused.of(key);
        if (!Number.isNaN(f)) offer(key, f + added(boost, key));
      }
    }
  }
  const out: Candidate[] = [];
  best.forEach((key, score) => out.push({ key, score, base: baseOf(key) }));
  return out;
}

/**
 * Names first (Algolia's "exact" criterion, and its preference for matches at the start of an
 * attribute; a search box's known item): among the `pool` best results so far
 * (`RANKING.names`), those whose whole name is the query, word for word in its order (as `words`
 * reads both: case, accents and punctuation folded, stop words kept), rank above every other
 * result, those whose name begins with the query's words come next, then those where the query's
 * last word, half typed, begins a longer one (only when the query ends in it). Each gets a multiple of
 * the best score so far added, large enough that no taste boost can undo the order (the page
 * multiplies scores by at most `maxBoost`), so they keep their own order among themselves. A
 * query of a name ("Sweet", "The Pierces") or its first words ("Star Wars") otherwise ranked items
 * whose names merely hold those words, or whose vectors are closer, first. Read from each
 * document's name, so a document gets the same in a build and in the delta. Answers `boost` with
 * these additions (or them alone), and the score the lifted results score above (`Ranked.namedAbove`).
 */
function namesFirst(
  keys: Keys,
  r: RankRequest,
  kw: KeywordMatches,
  fused: FusedScores,
  boost: KeyScores | undefined,
  best?: readonly Candidate[],
): { boost: KeyScores | undefined; above: number | undefined } {
  const unchanged = { boost, above: undefined };
  const asked = r.asked ?? r.query;
  const query = words(asked).join(' ');
  if (query === '' || RANKING.names.pool <= 0) return unchanged;
  // Its last word is half typed only when the query ends in it (as query expansion reads it): "star."
  // or "star " is the whole word, which "Stargate" does not begin with.
  const open = /[\p{L}\p{N}\p{M}]$/u.test(asked);
  let top = 0;
  const named: { key: number; tier: number }[] = [];
  for (const { key, score } of best ?? bestSoFar(keys, r, kw, fused, boost, RANKING.names.pool)) {
    if (score > top) top = score;
    const name = nameWords(keys.docOf(key));
    if (!name.startsWith(query)) continue;
    // 3: the name is the query; 2: it begins with the query's words; 1: its last word half typed.
    const tier = name.length === query.length ? 3 : name.charAt(query.length) === ' ' ? 2 : open ? 1 : 0;
    if (tier > 0) named.push({ key, tier });
  }
  if (named.length === 0 || !(top > 0)) return unchanged;
  // Every other result scores at most top × maxBoost once the page applies the taste; one of a
  // tier at least its addition, at most (top + it) × maxBoost, which the next tier's starts at.
  const maxBoost = r.profile ? 1 + RANKING.personalWeight : 1;
  const adds = [0];
  for (let tier = 1; tier <= 3; tier++) adds.push((top + (adds[tier - 1] as number)) * maxBoost);
  const out = boost ?? scratch.boost;
  out.reserve(keys.N + keys.S);
  for (const n of named) out.set(n.key, (out.get(n.key) ?? 0) + (adds[n.tier] as number));
  return { boost: out, above: top * maxBoost };
}

/**
 * A result's taste boost from its similarity to the user's profile: 1 + personalWeight × the
 * similarity within [0, 1]. The int8 kernel's similarity of two unit vectors can exceed 1 a little
 * (0.3 % at 64 dimensions); unclamped, the boost passed 1 + personalWeight, the most the page's
 * dismissal of weak matches and names first's tiers allow for.
 */
export function tasteBoost(similarity: number): number {
  return 1 + RANKING.personalWeight * Math.min(1, Math.max(0, similarity));
}

/**
 * Hands every candidate's fused score (with the taste boost) to the page: the vector-scored
 * candidates first, which fill the page with strong hits, so most of a broad query's keyword
 * tail is dismissed by one comparison.
 */
function emitAll(keys: Keys, r: RankRequest, kw: KeywordMatches, fused: FusedScores, headFrom: number | undefined, out: ResultPage, boost?: KeyScores): void {
  // The taste boost is at most (1 + personalWeight).
  const maxBoost = r.profile ? 1 + RANKING.personalWeight : 1;
  // The taste: the profile's similarity to a match through the int8 kernel, as browsing scores it
  // (no dequantised copy of each vector).
  const taste = r.profile ? keys.similarity(r.profile) : undefined;
  // A later page goes on after its cursor's item where it scores now (`PageRequest.after`).
  const anchors = out.anchorIds.map((id) => keyOfItem(keys, id, kw.keys, fused.keys)).filter((key) => key >= 0);
  if (r.mode === 'keyword' && !taste) {
    // A match's score is its keyword score alone: one read and one comparison with the page's
    // weakest turn away most of a broad query's tens of thousands of matches.
    const acc = scratch.acc;
    anchors.some((key) => out.reanchor(keys.docOf(key), (acc[key] as number) + added(boost, key)));
    for (const key of kw.keys) {
      const score = (acc[key] as number) + added(boost, key);
      if (!(score > 0)) continue;
      if (out.full(score)) out.total += 1;
      else out.add(key, keys.idOf(key), score);
    }
    return;
  }
  const emit = (key: number, fusedScore: number) => {
    let score = fusedScore;
    if (Number.isNaN(score)) return;
    score += added(boost, key);
    // Once the page is full, a match that cannot enter it even with the largest boost is only
    // counted: most of a broad query's matches leave here, without their document or taste.
    if (out.full(score * maxBoost)) {
      out.total += 1;
      return;
    }
    if (taste) score *= tasteBoost(taste(key));
    out.add(key, keys.idOf(key), score);
  };
  anchors.some((key) => {
    const score = fused.of(key) + added(boost, key);
    return out.reanchor(keys.docOf(key), taste ? score * tasteBoost(taste(key)) : score);
  });
  const { keys: scored, scores, vec } = fused;
  for (let i = 0; i < scored.length; i++) emit(scored[i] as number, scores[i] as number);
  // The rest are keyword matches below the head, without a vector score: each scores at most
  // alpha * headFrom / maxKw (times the largest taste boost). When that cannot enter the page,
  // they only count toward the total.
  const tailBound = headFrom === undefined ? Infinity : ((RANKING.hybridAlpha * headFrom) / kw.max) * maxBoost;
  if (out.full(tailBound)) {
    let scoredKw = 0;
    for (let i = 0; i < scored.length; i++) if (kw.of(scored[i] as number) > 0) scoredKw += 1;
    out.total += kw.keys.length - scoredKw;
  } else {
    for (const key of kw.keys) if (!vec.has(key)) emit(key, fused.of(key));
  }
}

/** The key among `lists` (accepted matches) of item `id`; -1 when none is. */
function keyOfItem(keys: Keys, id: number, ...lists: ArrayLike<number>[]): number {
  for (const list of lists) for (let j = 0; j < list.length; j++) if (keys.idOf(list[j] as number) === id) return list[j] as number;
  return -1;
}

/** What `boost` adds to a key's score (0 without a boost). */
function added(boost: KeyScores | undefined, key: number): number {
  if (!boost) return 0;
  const b = boost.scoreOf(key);
  return Number.isNaN(b) ? 0 : b;
}

/** The fusion of the vector-scored keys as their scores stand (`fusedScores`). */
interface FusedScores {
  /** The vector-scored keys (`vec.keys()`) and each one's fused score (NaN: no result), in scratch memory. */
  keys: Int32Array;
  scores: Float64Array;
  vec: KeyScores;
  /** Any key's fused score (the keyword matches without a vector score too). */
  of(key: number): number;
}

/**
 * The fused score of every vector-scored key, computed once for each state of the vector scores
 * (in scratch memory, which the next call reuses): agreement's first fusion, and after feedback
 * (the vector scores do not change after it) term feedback's, proximity's candidates and the page
 * all read the second, where each fused every key again.
 */
function fusedScores(r: RankRequest, kw: KeywordMatches, vec: KeyScores): FusedScores {
  const of = fusion(r, kw, vec);
  const scored = vec.keys();
  if (scratch.fused.length < scored.length) scratch.fused = roomFor(scratch.fused, scored.length);
  const scores = scratch.fused.subarray(0, scored.length);
  for (let i = 0; i < scored.length; i++) scores[i] = of(scored[i] as number);
  return { keys: scored, scores, vec, of };
}

/** Each key's fused score over these lists, the vector scores over their best (`fused`). */
function fusion(r: RankRequest, kw: KeywordMatches, vec: KeyScores): (key: number) => number {
  const maxVec = vec.max(1e-9);
  const asked = scratch.asked.size > 0 ? scratch.asked : vec;
  const askedMax = scratch.asked.size > 0 ? scratch.askedMax : maxVec;
  return (key) => fused(r.mode, kw.of(key), kw.max, vec.scoreOf(key), maxVec, asked.scoreOf(key), askedMax);
}

/** The fused score of a candidate, or NaN when it is no result: a number either way (a number-or-null answer was allocated per candidate, in a heap profile). */
function fused(mode: SearchMode, kw: number, maxKw: number, vec: number, maxVec: number, asked: number, askedMax: number): number {
  if (mode === 'keyword') return kw > 0 ? kw : Number.NaN;
  // A vector score (or the query as asked's) that is absent (NaN) or negative counts as 0.
  const v = Number.isNaN(vec) ? 0 : Math.max(0, vec);
  if (mode === 'semantic') return v > 0 ? v : Number.NaN;
  const k = kw / maxKw;
  const vn = v / maxVec;
  // Without a keyword match, only close neighbours of the query as asked count (before feedback
  // moved it): weak similarity is noise, not a result.
  if (k === 0) {
    const a = Number.isNaN(asked) ? 0 : Math.max(0, asked);
    if (a / askedMax < RANKING.vectorOnlyMin || a < RANKING.vectorOnlyMinCosine) return Number.NaN;
  }
  const score = RANKING.hybridAlpha * k + (1 - RANKING.hybridAlpha) * vn;
  return score > 0 ? score : Number.NaN;
}
