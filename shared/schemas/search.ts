import * as z from 'zod/mini';
import { contextIdInBody, forwardIssues, holdsInfinity, intBetween, limitParam, missingOr, OUT_OF_RANGE, POSITIVE_INT_PATTERN } from './common.ts';
import { documentAs, documentChecks } from './doc.ts';

/** The longest query either search route takes. */
const MAX_QUERY_CHARS = 1000;

const scalar = z.union([z.string(), z.number(), z.boolean()]);
// The lists' lengths are checked after their union, whose own error would only say "Invalid input"
// (documented as the union with the bound on the list).
const oneOrMany = documentAs(
  z
    .union([z.string().check(z.minLength(1)), z.array(z.string().check(z.minLength(1))).check(z.minLength(1))], { error: 'a string, or a list of 1 to 100 strings' })
    .check(z.refine((v) => typeof v === 'string' || v.length <= 100, 'at most 100 values')),
  z.union([z.string().check(z.minLength(1)), z.array(z.string().check(z.minLength(1))).check(z.minLength(1), z.maxLength(100))]),
);

/** `metadata.<key>`: any key an item's metadata can hold, or a dotted path into its nested objects (domain/metadata-path.ts), 1 to 1,000 characters. */
const METADATA_KEY = 'metadata\\.[\\s\\S]{1,1000}';

const filterField = z
  .string()
  .check(z.regex(new RegExp(`^(id|name|description|active|created|updated_at|${METADATA_KEY})$`), 'field must be id, name, description, active, created, updated_at or metadata.<key>'));

/** The kind of value each of the item's own fields holds (metadata keys hold any). */
const FIELD_KINDS: Readonly<Record<string, 'boolean' | 'number' | 'string'>> = { active: 'boolean', created: 'number', updated_at: 'number', name: 'string', description: 'string' };

/** Ops that compare for equality. */
const EQUALITY_OPS: ReadonlySet<string> = new Set(['eq', 'neq', 'in']);
/** Ops that compare numbers: their value must be one. */
const ORDERED_OPS: ReadonlySet<string> = new Set(['gt', 'gte', 'lt', 'lte']);

/**
 * One filter clause `{ field, op, value }`, as the Platform item search and (as a list in
 * `filters`) Core search take it.
 */
const filterClause = z
  .strictObject({
    field: filterField,
    op: z.enum(['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'exists']),
    value: z.optional(
      documentAs(
        z.union([scalar, z.array(scalar)], {
          // Its own error would only say "Invalid input" (a null or an object value); a number
          // JSON.parse read as Infinity (`1e400`) was told to be a number.
          error: (issue) =>
            holdsInfinity(issue.input) ? OUT_OF_RANGE : 'value must be a string, number or boolean, or a list of them for in; for a key that is missing or null, use op exists with value false',
        }),
        // The list's bound is checked with the clause (below), documented here.
        z.union([scalar, z.array(scalar).check(z.maxLength(1000))]),
      ),
    ),
  })
  .check(
    z.refine((f) => !Array.isArray(f.value) || f.value.length <= 1000, { message: 'at most 1000 values', path: ['value'] }),
    z.refine((f) => (f.op === 'in' ? Array.isArray(f.value) : f.value !== undefined && !Array.isArray(f.value)), {
      message: 'value must be a list for op in, and a single string, number or boolean for the other ops',
      path: ['value'],
    }),
    // An item ID's digits compare as the ID (checked below), with every op.
    z.refine((f) => !ORDERED_OPS.has(f.op) || typeof f.value === 'number' || (f.field === 'id' && typeof f.value === 'string'), {
      message: 'value must be a number for gt, gte, lt and lte',
      path: ['value'],
    }),
    // The item's own fields have one kind each: another kind could never match, and is a mistake.
    z.refine((f) => f.op === 'exists' || !(f.field in FIELD_KINDS) || [f.value].flat().every((v) => typeof v === FIELD_KINDS[f.field]), {
      message: 'value is of the wrong kind for this field (active: true or false; created, updated_at: Unix seconds; name, description: a string)',
      path: ['value'],
    }),
    // Times are whole seconds: a fraction is never equal to one, a mistake (until 2026-12-05 it was
    // taken: eq and in matched nothing, neq everything). A value of another kind is told above alone.
    z.refine((f) => !(f.field === 'created' || f.field === 'updated_at') || !EQUALITY_OPS.has(f.op) || [f.value].flat().every((v) => typeof v !== 'number' || Number.isInteger(v)), {
      message: 'created and updated_at are whole Unix seconds: eq, neq and in take integers',
      path: ['value'],
    }),
    z.refine((f) => f.op !== 'exists' || typeof f.value === 'boolean', { message: 'value must be true or false for exists', path: ['value'] }),
    z.refine(
      (f) =>
        f.field !== 'id' || f.op === 'exists' || [f.value].flat().every((v) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) || (typeof v === 'string' && POSITIVE_INT_PATTERN.test(v))),
      {
        message: 'an item ID is a positive integer, or its digits as a string',
        path: ['value'],
      },
    ),
  );
export type FilterClause = z.output<typeof filterClause>;
const filterClauses = z.array(filterClause).check(z.maxLength(20, 'at most 20 filter clauses'));

/** Today's shorthand filters object of Core search. */
const shorthandFilters = z.strictObject({
  category: z.optional(oneOrMany),
  brand: z.optional(oneOrMany),
  availability: z.optional(z.string().check(z.minLength(1))),
  price: z.optional(z.strictObject({ gte: z.optional(z.number()), lte: z.optional(z.number()) })),
  metadata: z.optional(
    // At most as many keys as the clause form has clauses (it had no bound).
    documentChecks(
      z
        .record(
          z.string(),
          z.union([z.string(), z.number(), z.boolean()], {
            // Its own error would only say "Invalid input" (a null, a list or an object value); a
            // number JSON.parse read as Infinity (`1e400`) was told to be a number.
            error: (issue) =>
              holdsInfinity(issue.input)
                ? OUT_OF_RANGE
                : 'a metadata filter value is a string, number or boolean; for a list of values or a key that is missing or null, use the [{ field, op, value }] form (op in, or exists with value false)',
          }),
        )
        .check(z.refine((o) => Object.keys(o).length <= 20, 'at most 20 metadata filters')),
      { maxProperties: 20 },
    ),
  ),
});
export type ShorthandFilters = z.output<typeof shorthandFilters>;

/**
 * Core `filters`: the shorthand object, or a list of `{ field, op, value }` clauses (all must
 * hold). Told apart by shape, so each form's errors are reported against its own fields.
 */
const coreFilters = documentAs(
  z.pipe(
    z.unknown(),
    z.transform((v, payload): ShorthandFilters | FilterClause[] => {
      const r = Array.isArray(v) ? filterClauses.safeParse(v) : shorthandFilters.safeParse(v);
      if (r.success) return r.data;
      forwardIssues(r.error, payload);
      return [];
    }),
  ),
  z.union([shorthandFilters, filterClauses]),
);

/** The most facets a search asks for. */
export const MAX_FACETS = 20;

/** The most disjunctive facets a search asks for: each one its filters name costs a ranking of its own. */
export const MAX_DISJUNCTIVE_FACETS = 5;

/** A facet: a metadata key (or a path into nested objects: domain/metadata-path.ts), as `brand` or `metadata.brand`. */
const facetKey = documentAs(
  z.pipe(
    z.pipe(
      z.string('a facet is a metadata key'),
      z.transform((k: string) => (k.startsWith('metadata.') ? k.slice('metadata.'.length) : k)),
    ),
    z.string().check(z.minLength(1, 'a facet is a metadata key, optionally written metadata.<key>'), z.maxLength(1000, 'a facet key is at most 1000 characters')),
  ),
  // Documented as what it takes: a key of 1 to 1000 characters, "metadata." before it or not (until
  // the review of f8eddfc1 any string, "" and "metadata." included, which are 400).
  z.union([z.string().check(z.regex(/^metadata\./), z.minLength(10), z.maxLength(1009)), z.string().check(z.regex(/^(?!metadata\.)/), z.minLength(1), z.maxLength(1000))]),
);

const tag = z.string('a highlight tag is a string').check(z.maxLength(100, 'a highlight tag is at most 100 characters'));

/** Core `POST /v1/search` body (api-decisions). */
export const searchBody = z
  .strictObject({
    query: z
      .string({ error: missingOr('query is required (may be empty to browse)', 'query must be a string (may be empty to browse)') })
      .check(z.maxLength(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`)),
    /** The shorthand object, or a list of `{ field, op, value }` clauses. */
    filters: z.optional(coreFilters),
    limit: z._default(z.optional(intBetween('limit', 1, 100)), 20),
    starting_after: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
    mode: z._default(z.optional(z.enum(['hybrid', 'keyword', 'semantic'])), 'hybrid'),
    user_id: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
    context_id: z.optional(contextIdInBody),
    /** Adds to each hit why it is there: base score, rules applied, rerank steps, experiment variant. */
    explain: z._default(z.optional(z.boolean('explain must be true or false')), false),
    /** Metadata keys whose values are counted over all matches (strings), or whose range is given (numbers). */
    facets: z.optional(z.array(facetKey).check(z.maxLength(MAX_FACETS, `at most ${MAX_FACETS} facets`))),
    /**
     * Facets counted without the filters on their own key (a multi-select facet list: how many
     * matches each other value would add), the others applied; answered in `facets` beside those.
     */
    disjunctive_facets: z.optional(z.array(facetKey).check(z.maxLength(MAX_DISJUNCTIVE_FACETS, `at most ${MAX_DISJUNCTIVE_FACETS} disjunctive facets`))),
    /** Adds `highlight: { name, description }` to each hit, the matched words marked. */
    highlight: z._default(z.optional(z.boolean('highlight must be true or false')), false),
    highlight_tags: z.optional(z.strictObject({ pre: tag, post: tag })),
    /** A numeric key's order instead of relevance. */
    sort: z.optional(
      z.strictObject({
        field: z.string().check(z.regex(new RegExp(`^(created|updated_at|${METADATA_KEY})$`), 'sort field must be metadata.<key>, created or updated_at')),
        order: z._default(z.optional(z.enum(['asc', 'desc'])), 'asc'),
      }),
    ),
  })
  .check(
    z.refine((b) => b.highlight_tags === undefined || b.highlight, { message: 'highlight_tags needs highlight: true', path: ['highlight_tags'] }),
    z.refine((b) => new Set([...(b.facets ?? []), ...(b.disjunctive_facets ?? [])]).size <= MAX_FACETS, {
      message: `at most ${MAX_FACETS} facets in all (facets and disjunctive_facets)`,
      path: ['disjunctive_facets'],
    }),
    z.refine((b) => b.sort === undefined || b.context_id === undefined, {
      message: 'sort cannot be combined with context_id: a context orders its results by its rules and rerank controls',
      path: ['sort'],
    }),
  );
export type SearchBody = z.output<typeof searchBody>;

/** Platform `POST /api/items/search` body. */
export const platformSearchBody = z.strictObject({
  query: z._default(z.optional(z.string().check(z.maxLength(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`))), ''),
  filters: z._default(z.optional(filterClauses), []),
  limit: z._default(z.optional(intBetween('limit', 1, 100)), 20),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
});

/** Platform `GET /api/items/search?query=&limit=&cursor=`. */
export const platformSearchQuery = z.strictObject({
  query: z._default(z.optional(z.string().check(z.maxLength(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`))), ''),
  limit: limitParam,
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
});
