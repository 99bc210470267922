import * as z from 'zod/mini';
import { POSITIVE_INT_PATTERN } from './common.ts';

/** The longest query either search route takes. */
const MAX_QUERY_CHARS = 1000;

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const oneOrMany = z.union([z.string().check(z.minLength(1)), z.array(z.string().check(z.minLength(1))).check(z.minLength(1), z.maxLength(100))]);

/** Core `POST /v1/search` body (api-decisions). */
export const searchBody = z.strictObject({
  query: z.string({ error: 'query is required (may be empty to browse)' }).check(z.maxLength(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`)),
  filters: z.optional(
    z.strictObject({
      category: z.optional(oneOrMany),
      brand: z.optional(oneOrMany),
      availability: z.optional(z.string().check(z.minLength(1))),
      price: z.optional(z.strictObject({ gte: z.optional(z.number()), lte: z.optional(z.number()) })),
      metadata: z.optional(z.record(z.string(), scalar)),
    }),
  ),
  limit: z._default(z.optional(z.int('limit must be an integer').check(z.gte(1), z.lte(100))), 20),
  starting_after: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  mode: z._default(z.optional(z.enum(['hybrid', 'keyword', 'semantic'])), 'hybrid'),
  user_id: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  context_id: z.optional(
    z.pipe(
      z.union([z.string().check(z.regex(POSITIVE_INT_PATTERN, 'context_id must be a numeric console context ID')), z.int().check(z.positive())]),
      z.transform(String),
    ),
  ),
  /** Adds to each hit why it is there: base score, rules applied, rerank steps, experiment variant. */
  explain: z._default(z.optional(z.boolean('explain must be true or false')), false),
});
export type SearchBody = z.output<typeof searchBody>;

const filterField = z
  .string()
  .check(z.regex(/^(id|name|description|active|created|updated_at|metadata\.[A-Za-z0-9_-]{1,64})$/, 'field must be id, name, description, active, created, updated_at or metadata.<key>'));

/** Platform `POST /api/items/search` body. */
export const platformSearchBody = z.strictObject({
  query: z._default(z.optional(z.string().check(z.maxLength(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`))), ''),
  filters: z._default(
    z.optional(
      z
        .array(
          z
            .strictObject({
              field: filterField,
              op: z.enum(['eq', 'neq', 'in', 'gte', 'lte', 'exists']),
              value: z.optional(z.union([scalar, z.array(scalar)])),
            })
            .check(
              z.refine((f) => (f.op === 'in' ? Array.isArray(f.value) : f.value !== undefined && !Array.isArray(f.value)), {
                message: 'value must be a list for op in, and a single string, number or boolean for the other ops',
                path: ['value'],
              }),
              z.refine((f) => !(f.op === 'gte' || f.op === 'lte') || typeof f.value === 'number', { message: 'value must be a number for gte and lte', path: ['value'] }),
              z.refine((f) => f.op !== 'exists' || typeof f.value === 'boolean', { message: 'value must be true or false for exists', path: ['value'] }),
              z.refine((f) => f.field !== 'id' || f.op === 'exists' || [f.value].flat().every((v) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) || (typeof v === 'string' && POSITIVE_INT_PATTERN.test(v))), {
                message: 'an item ID is a positive integer, or its digits as a string',
                path: ['value'],
              }),
            ),
        )
        .check(z.maxLength(20)),
    ),
    [],
  ),
  limit: z._default(z.optional(z.int().check(z.gte(1), z.lte(100))), 20),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});
export type PlatformSearchBody = z.output<typeof platformSearchBody>;

/** Platform `GET /api/items/search?query=&limit=&cursor=`. */
export const platformSearchQuery = z.strictObject({
  query: z._default(z.optional(z.string().check(z.maxLength(MAX_QUERY_CHARS, `query must be at most ${MAX_QUERY_CHARS} characters`))), ''),
  limit: z._default(
    z.optional(
      z.pipe(
        z.pipe(z.string().check(z.regex(/^[0-9]+$/, 'limit must be an integer')), z.transform(Number)),
        z.number().check(z.int(), z.gte(1), z.lte(100)),
      ),
    ),
    20,
  ),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});
