import * as z from 'zod/mini';
import { MAX_SYNONYMS_PER_SET } from '../search/synonyms.ts';
import { phraseTerms, words } from '../search/text.ts';
import { limitParam, limitParamOf, numericId, ONE_LINE_DOC, oneLineOnly } from './common.ts';
import { documentAs, documentChecks } from './doc.ts';

/** Platform schemas of search administration: synonym sets and search analytics. */

const phrase = documentChecks(
  z.string('a synonym is a string').check(
    z.maxLength(100, 'a synonym is at most 100 characters'),
    // As a name: a synonym is one line the console lists (search would read NUL or a line break as a space).
    oneLineOnly('a synonym'),
    z.refine((s) => words(s).length > 0, 'a synonym must hold a word (letters or digits)'),
    // Search leaves stop words out of queries and documents: such a synonym would never apply (it was stored, 201).
    z.refine((s) => words(s).length === 0 || phraseTerms(s).length > 0, 'a synonym must hold a word search does not ignore: "the", "of" and other stop words alone never match'),
    z.refine((s) => words(s).length <= 8, 'a synonym is at most 8 words'),
  ),
  // The refinements, as far as JSON Schema says them (until 2026-12-08 the document took "").
  { minLength: 1, ...ONE_LINE_DOC, description: 'One line of 1 to 8 words (letters or digits), not only stop words such as "the" or "of".' },
);
const phrases = z
  .array(phrase, 'synonyms is a list of strings')
  .check(z.minLength(1, 'synonyms must not be empty'), z.maxLength(MAX_SYNONYMS_PER_SET, `at most ${MAX_SYNONYMS_PER_SET} synonyms in a set`));
const type = z.enum(['two_way', 'one_way'], 'type must be two_way or one_way');

/** `POST /api/synonyms`: a two-way set `{ synonyms }` or a one-way set `{ type: "one_way", input, synonyms }`. */
export const synonymBody = z.strictObject({
  type: z.optional(type),
  input: z.optional(z.nullable(phrase)),
  synonyms: phrases,
});

/** `PATCH /api/synonyms/{id}`: the fields sent replace the set's; at least one, as every Platform PATCH. */
export const synonymPatch = documentChecks(
  z
    .strictObject({
      type: z.optional(type),
      input: z.optional(z.nullable(phrase)),
      synonyms: z.optional(phrases),
    })
    .check(z.refine((b) => Object.keys(b).length > 0, 'Supply at least one field.')),
  { minProperties: 1 },
);

export const synonymsQuery = z.strictObject({ limit: limitParam, starting_after: z.optional(numericId('starting_after')) });

const eventType = z.string().check(z.regex(/^[a-z][a-z0-9_]{0,63}$/, 'an event type matches ^[a-z][a-z0-9_]{0,63}$'));

/**
 * A day (`YYYY-MM-DD`, UTC) or Unix seconds up to 253402300799 (9999-12-31, the last day so
 * written), as searchAnalytics reads them: the document's pattern. Until 2026-12-08 it took any
 * 12 digits, which past that second are 400.
 */
const DAY_OR_SECONDS = /^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{1,11}|[01][0-9]{11}|2[0-4][0-9]{10}|25[0-2][0-9]{9}|253[0-3][0-9]{8}|25340[01][0-9]{6}|253402[0-2][0-9]{5}|253402300[0-7][0-9]{2})$/;
const dayOrSeconds = documentChecks(z.string().check(z.regex(DAY_OR_SECONDS)), {
  description: 'A day, YYYY-MM-DD (UTC; a date of the calendar), or Unix seconds up to 253402300799 (9999-12-31).',
});

/** `GET /api/analytics/searches?from=&to=&limit=&click_type=&conversion_type=`. */
export const searchAnalyticsQuery = z.strictObject({
  // Read by searchAnalytics (a date or Unix seconds; at most MAX_RANGE_DAYS apart): documented as such.
  from: documentAs(z.optional(z.string()), z.optional(dayOrSeconds)),
  to: documentAs(z.optional(z.string()), z.optional(dayOrSeconds)),
  limit: limitParamOf(10),
  click_type: z._default(z.optional(eventType), 'click'),
  conversion_type: z._default(z.optional(eventType), 'purchase'),
});
