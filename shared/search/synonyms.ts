/**
 * Synonyms: per tenant, sets managed on the Platform API (`/api/synonyms`) and applied to Core
 * search queries at query time, so a change needs no index rebuild. A two-way set
 * (`{ type: "two_way", synonyms: ["sneaker", "trainer", "running shoe"] }`) makes a query with
 * any of its phrases also look for the others; a one-way set (`{ type: "one_way", input: "phone",
 * synonyms: ["smartphone", "mobile"] }`) only from `input` to the synonyms.
 *
 * Applying: the query's words are stemmed as the index stems them, and a phrase matches where its
 * stems appear in the query in a row. The words of the phrases it brings are put before the
 * query (so its last word is still completed as a prefix), those the vocabulary holds only: a
 * word no item has would find nothing but its typo neighbours. Ranking then weighs them as the
 * query's own words, and highlighting marks them.
 *
 * Serving reads a tenant's sets with one Query and keeps them (compiled) for SYNONYMS_CACHE_MS
 * per container (default 5 s): a change serves within that bound.
 */
import { config } from '../config.ts';
import { nowMs, nowSeconds as now } from '../clock.ts';
import { Lru } from '../lru.ts';
import { platformList } from '../domain/present.ts';
import { type AuditEntry, createdBefore, newId } from '../domain/console-records.ts';
import type { IdPlan } from '../domain/types.ts';
import { InvalidInput, NotFound } from '../domain/errors.ts';
import { RANKING } from './constants.ts';
import { phraseTerms, stem, tokens, words } from './text.ts';

export interface SynonymSet {
  id: number;
  type: 'two_way' | 'one_way';
  /** The phrase a one-way set maps from (null for two-way sets). */
  input: string | null;
  synonyms: string[];
  created: number;
  updated_at: number;
}

/**
 * A change's audit trail entry (the same trail as the control records', resource `synonyms/<id>`):
 * made once the change has read the set and before it writes it, and written in one transaction
 * with it, so the trail lists the changes made, in the order they were written.
 */
export type SynonymAudit = (action: AuditEntry['action'], before: SynonymSet | null, after: SynonymSet | null) => Promise<AuditEntry>;

export interface SynonymStore {
  nextId(tenant: string): Promise<number>;
  /** An id of the tenant's audit trail (shared with the control records' entries). */
  auditId(tenant: string): Promise<number>;
  /**
   * Stores a new set unless the tenant has `cap` sets: false then. Exact under creates at once:
   * never past the cap, and refused only when it was reached. With `entry`, the set's audit entry
   * is written with it (one transaction).
   */
  create(tenant: string, s: SynonymSet, cap: number, entry?: AuditEntry): Promise<boolean>;
  get(tenant: string, id: number): Promise<SynonymSet | undefined>;
  page(tenant: string, q: { limit: number; after?: number | undefined }): Promise<{ rows: SynonymSet[]; hasMore: boolean }>;
  /** Every set of the tenant (what search applies). */
  all(tenant: string): Promise<SynonymSet[]>;
  /**
   * Changes a set: `next` computes it from the set as stored (it may throw), and it is stored only
   * if the set is still as read (else read again and `next` called again), with `audit`'s entry
   * in the same transaction; `next` answering the set it was given is no change, not written. The
   * set stored, or undefined when there is none.
   */
  change(tenant: string, id: number, next: (cur: SynonymSet) => SynonymSet, audit?: SynonymAudit): Promise<SynonymSet | undefined>;
  /** false when there was none. A set deleted is kept as it was for `removed`; with `audit`, its entry is written with the deletion. */
  remove(tenant: string, id: number, audit?: SynonymAudit): Promise<boolean>;
  /** A set `remove` deleted, as it was then, while a retry of the create that stored it can come (the Idempotency-Key's life and an hour). */
  removed(tenant: string, id: number): Promise<SynonymSet | undefined>;
}

/** Sets a tenant may have. */
export const MAX_SYNONYM_SETS = 1000;
/** Synonyms a set holds at most (a one-way set's input besides them): the body schema's cap, and a type change's. */
export const MAX_SYNONYMS_PER_SET = 20;
/** Words and phrases one query gains from synonyms at most. */
const MAX_ADDED_WORDS = 32;

export interface SynonymInput {
  type?: 'two_way' | 'one_way' | undefined;
  input?: string | null | undefined;
  synonyms?: string[] | undefined;
}

const notFound = (id: number) => new NotFound('synonym_not_found', `No synonym set ${id}.`);

/**
 * The audit trail's entries of a caller's changes (`actor`: the API key's prefix, or the console
 * user; null when none made it), as the control records' (shared/control/records.ts): until
 * 2026-12-07 a synonym set's create, change or delete, which changes every search as a rule does,
 * left no entry.
 */
const auditOf =
  (store: Pick<SynonymStore, 'auditId'>, tenant: string, actor: string | null | undefined, id: number): SynonymAudit =>
  async (action, before, after) => ({ id: await store.auditId(tenant), at: now(), actor: actor ?? null, action, resource: `synonyms/${id}`, before, after });

/** The set a create or change makes, checked as a whole: a two-way set has 2+ phrases and no input; a one-way set an input and 1+ synonyms. */
function checked(type: 'two_way' | 'one_way', input: string | null, synonyms: string[]): { type: 'two_way' | 'one_way'; input: string | null; synonyms: string[] } {
  // Phrases that are one at query time (case, accents, inflection: the words' stems) are one
  // synonym, the first spelling kept; a one-way set's own input is no synonym of it.
  const inputForm = input === null ? undefined : stemsOf(input).join(' ');
  const byForm = new Map<string, string>();
  for (const phrase of synonyms.map((s) => s.trim())) {
    const form = stemsOf(phrase).join(' ');
    if (form !== inputForm && !byForm.has(form)) byForm.set(form, phrase);
  }
  const distinct = [...byForm.values()];
  if (distinct.length > MAX_SYNONYMS_PER_SET)
    throw new InvalidInput('Invalid request body.', { synonyms: [`at most ${MAX_SYNONYMS_PER_SET} synonyms in a set (a one_way set's input counts as one when it becomes two_way)`] });
  if (type === 'two_way') {
    if (input !== null) throw new InvalidInput('Invalid request body.', { input: ['a two_way set has no input: all its synonyms are equivalent'] });
    if (distinct.length < 2) throw new InvalidInput('Invalid request body.', { synonyms: ['a two_way set needs at least 2 different synonyms'] });
  } else {
    if (input === null) throw new InvalidInput('Invalid request body.', { input: ['a one_way set needs an input'] });
    if (distinct.length < 1) throw new InvalidInput('Invalid request body.', { synonyms: ['a one_way set needs at least 1 synonym other than its input'] });
  }
  return { type, input: input === null ? null : input.trim(), synonyms: distinct };
}

/**
 * Creates a set, within the tenant's MAX_SYNONYM_SETS (`cap` but in tests): exact however many
 * creates run at once (the store's `create`). A refused create has written nothing but its ids (the
 * set's and its audit entry's, taken from their counters).
 */
export async function createSynonymSet(store: SynonymStore, tenant: string, b: SynonymInput, cap = MAX_SYNONYM_SETS, ids?: IdPlan, actor?: string): Promise<SynonymSet> {
  // A retry (same Idempotency-Key) of an attempt that stored its set: that set, as stored, or as
  // it was when deleted since (until 2026-12-04 the retry stored it again).
  const done = await createdBefore(ids, async (id) => (await store.get(tenant, id)) ?? (await store.removed(tenant, id)));
  if (done) return done;
  const body = checked(b.type ?? 'two_way', b.input ?? null, b.synonyms ?? []);
  const t = now();
  const s: SynonymSet = { id: await newId(() => store.nextId(tenant), ids), ...body, created: t, updated_at: t };
  const entry = await auditOf(store, tenant, actor, s.id)('create', null, s);
  if (!(await store.create(tenant, s, cap, entry))) throw new InvalidInput('Too many synonym sets.', { synonyms: [`a tenant has at most ${cap} synonym sets`] });
  return s;
}

export async function getSynonymSet(store: SynonymStore, tenant: string, id: number): Promise<SynonymSet> {
  const s = await store.get(tenant, id);
  if (!s) throw notFound(id);
  return s;
}

export async function listSynonymSets(store: SynonymStore, tenant: string, q: { limit: number; starting_after?: number | undefined }) {
  const { rows, hasMore } = await store.page(tenant, { limit: q.limit, after: q.starting_after });
  const last = rows[rows.length - 1];
  // The Platform list envelope, as every Platform list answers (api-decisions: `{ data, has_more, next_cursor }`).
  return platformList(rows, { hasMore, cursor: last ? String(last.id) : null });
}

/**
 * A change: the fields sent replace the set's (a type change must bring what the new type needs);
 * the fields not sent keep what the set holds when it is written, so two changes at once both land.
 */
export async function updateSynonymSet(store: SynonymStore, tenant: string, id: number, b: SynonymInput, actor?: string): Promise<SynonymSet> {
  const next = await store.change(
    tenant,
    id,
    (cur) => {
      const type = b.type ?? cur.type;
      // A one-way set made two-way: its input has no place of its own (one sent is refused), so unless
      // the change sends the synonyms or `input: null`, the input becomes the first of them: "parka" →
      // jacket, coat turns into parka = jacket = coat. Until 2026-12-03 the input was dropped unsaid.
      const toTwoWay = type === 'two_way' && cur.type === 'one_way';
      const input = b.input !== undefined ? b.input : toTwoWay ? null : cur.input;
      const kept = toTwoWay && b.input === undefined && cur.input !== null ? [cur.input, ...cur.synonyms] : cur.synonyms;
      const after = checked(type, input, b.synonyms ?? kept);
      // The set as it is (a PATCH sent twice, a form saved unchanged): no change, `cur` itself, which
      // the store does not write (updated_at stays, no audit entry), as a rule's (until 2026-12-07
      // it was written again with a new updated_at).
      if (after.type === cur.type && after.input === cur.input && after.synonyms.join('\u0000') === cur.synonyms.join('\u0000')) return cur;
      return { ...cur, ...after, updated_at: now() };
    },
    auditOf(store, tenant, actor, id),
  );
  if (!next) throw notFound(id);
  return next;
}

export async function deleteSynonymSet(store: SynonymStore, tenant: string, id: number, actor?: string): Promise<void> {
  if (!(await store.remove(tenant, id, auditOf(store, tenant, actor, id)))) throw notFound(id);
}

// Query time

/** A set as serving applies it: phrases as stem sequences, and the phrases each brings. */
export interface SynonymRule {
  /** Phrases that trigger (stems), each with the phrases it brings (as written). */
  triggers: { stems: string[]; brings: string[] }[];
}

const stemsOf = (phrase: string) => tokens(phrase).map(stem);

function compile(sets: readonly SynonymSet[]): SynonymRule[] {
  return sets.map((s) => {
    const phrases = s.synonyms.map((p) => ({ stems: stemsOf(p), text: words(p).join(' ') })).filter((p) => p.stems.length > 0);
    if (s.type === 'one_way') {
      const stems = stemsOf(s.input ?? '');
      return { triggers: stems.length ? [{ stems, brings: phrases.map((p) => p.text) }] : [] };
    }
    return { triggers: phrases.map((p, k) => ({ stems: p.stems, brings: phrases.filter((_, j) => j !== k).map((o) => o.text) })) };
  });
}

function containsRun(hay: readonly string[], needle: readonly string[]): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * A query with what its synonym sets bring: `query` with the one-word synonyms put before it, and
 * the synonyms of more than one term (`phrases`: "television set" for tv, or a Chinese, Japanese or
 * Korean word, which is its character pairs), which ranking scores only where all their terms are
 * (`RankRequest.phrases`): their words alone ("set") would match what the phrase does not mean.
 */
export interface WithSynonyms {
  query: string;
  phrases: string[];
  /**
   * The one-word synonyms in `query`, by what brought them: the query's term a set triggered on
   * (`word`; none when the trigger was more than one term) with the terms it brought. Ranking
   * scores each as one word of the query (`RankRequest.alternatives`): an item holding three
   * synonyms of a word does not outrank one holding the word.
   */
  alternatives: Alternatives[];
}

/** One query term's one-word synonyms (stems), or those a trigger of several terms brought (`word` undefined). */
export interface Alternatives {
  word?: string | undefined;
  terms: string[];
}

/**
 * The query with what its synonym sets bring (`WithSynonyms`): the phrases of the sets it holds a
 * trigger of, those whose terms the vocabulary holds (`known`, by stem) and the query does not
 * hold all of already; the query itself when no set applies. Ranking scores a query's first
 * RANKING.maxQueryTerms distinct terms, and the one-word synonyms come first: they take only the
 * room the query's own terms leave, never a place of one of them (until 2026-12-05 a long query's
 * last words could go unscored, and an item matching only those was not found).
 */
export function applySynonyms(query: string, rules: readonly SynonymRule[], known: (stem: string) => boolean): WithSynonyms {
  const none = { query, phrases: [], alternatives: [] };
  if (rules.length === 0) return none;
  const q = stemsOf(query);
  if (q.length === 0) return none;
  const have = new Set(q);
  const room = RANKING.maxQueryTerms - phraseTerms(query).length;
  const added: string[] = [];
  const phrases: string[] = [];
  const alternatives: Alternatives[] = [];
  for (const r of rules) {
    for (const t of r.triggers) {
      if (!containsRun(q, t.stems)) continue;
      const brought: string[] = [];
      for (const w of t.brings) {
        // Its terms: stop words take no part ("house of cards" needs house and card).
        const ts = phraseTerms(w);
        if (ts.length === 0 || ts.every((s) => have.has(s)) || !ts.every(known) || added.length + phrases.length >= MAX_ADDED_WORDS) continue;
        if (ts.length === 1 && added.length >= room) continue;
        for (const s of ts) have.add(s);
        if (ts.length > 1) phrases.push(w);
        else {
          added.push(w);
          brought.push(ts[0] as string);
        }
      }
      if (brought.length > 0) alternatives.push({ word: t.stems.length === 1 ? t.stems[0] : undefined, terms: brought });
    }
  }
  return { query: added.length ? `${added.join(' ')} ${query}` : query, phrases, alternatives };
}

/**
 * `applySynonyms` against a catalog as it is now: a term is known when an item holds it (the
 * build's copy of a changed item holds its words no more), as a build of the same items counts
 * it, so that the same query brings the same synonyms before and after the build.
 */
export const synonymsIn = (catalog: { liveDf(term: string): number }, query: string, rules: readonly SynonymRule[]): WithSynonyms => applySynonyms(query, rules, (t) => catalog.liveDf(t) > 0);

/** The text a query with its synonyms is embedded and highlighted by: the phrases' words too. */
export const synonymText = (s: WithSynonyms): string => (s.phrases.length ? `${s.phrases.join(' ')} ${s.query}` : s.query);

/** How long a container reuses a tenant's synonym sets (SYNONYMS_CACHE_MS). */
export const SYNONYMS_CACHE_MS = config().search.synonymsCacheMs;

/**
 * Cache: each tenant's compiled synonym sets, for SYNONYMS_CACHE_MS. Bound: SYNONYMS_CACHE_TENANTS
 * tenants, the least recently used let go (until 2026-12-07 emptied whole when full: past it, every
 * tenant's sets, busy ones too, were read again as one-off tenants came and went).
 */
export const SYNONYMS_CACHE_TENANTS = 1001;
const cache = new Lru<string, { at: number; rules: Promise<SynonymRule[]> }>(SYNONYMS_CACHE_TENANTS);

/** A tenant's compiled synonym sets: read with one Query at most every SYNONYMS_CACHE_MS per container. */
export function synonymRules(tenant: string, read: (tenant: string) => Promise<SynonymSet[]>): Promise<SynonymRule[]> {
  const hit = cache.get(tenant);
  if (hit && nowMs() - hit.at < SYNONYMS_CACHE_MS) return hit.rules;
  const entry = { at: nowMs(), rules: read(tenant).then(compile) };
  // A failed read is not kept: the next request reads again.
  entry.rules.catch(() => {
    if (cache.peek(tenant) === entry) cache.delete(tenant);
  });
  cache.set(tenant, entry);
  return entry.rules;
}
