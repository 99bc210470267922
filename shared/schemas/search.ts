import * as z from 'zod';
import { POSITIVE_INT_PATTERN } from './common.ts';

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const oneOrMany = z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(100)]);

/** Core `POST /v1/search` body (api-decisions). */
export const searchBody = z.strictObject({
  query: z.string({ error: 'query is required (may be empty to browse)' }).max(1000),
  filters: z
    .strictObject({
      category: oneOrMany.optional(),
      brand: oneOrMany.optional(),
      availability: z.string().min(1).optional(),
      price: z.strictObject({ gte: z.number().optional(), lte: z.number().optional() }).optional(),
      metadata: z.record(z.string(), scalar).optional(),
    })
    .optional(),
  limit: z.int('limit must be an integer').min(1).max(100).optional().default(20),
  starting_after: z.string().min(1).max(200).optional(),
  mode: z.enum(['hybrid', 'keyword', 'semantic']).optional().default('hybrid'),
  user_id: z.string().min(1).max(256).optional(),
  context_id: z.union([z.string().regex(POSITIVE_INT_PATTERN, 'context_id must be a numeric console context ID'), z.int().positive()]).transform(String).optional(),
});
export type SearchBody = z.output<typeof searchBody>;

const filterField = z.string().regex(/^(id|name|description|active|created|updated_at|metadata\.[A-Za-z0-9_-]{1,64})$/, 'field must be id, name, description, active, created, updated_at or metadata.<key>');

/** Platform `POST /api/items/search` body. */
export const platformSearchBody = z.strictObject({
  query: z.string().max(1000).optional().default(''),
  filters: z
    .array(
      z.strictObject({
        field: filterField,
        op: z.enum(['eq', 'neq', 'in', 'gte', 'lte', 'exists']),
        value: z.union([scalar, z.array(scalar)]).optional(),
      }),
    )
    .max(20)
    .optional()
    .default([]),
  limit: z.int().min(1).max(100).optional().default(20),
  cursor: z.string().min(1).max(200).optional(),
});
export type PlatformSearchBody = z.output<typeof platformSearchBody>;

/** Platform `GET /api/items/search?query=&limit=&cursor=`. */
export const platformSearchQuery = z.strictObject({
  query: z.string().max(1000).optional().default(''),
  limit: z.string().regex(/^[0-9]+$/, 'limit must be an integer').transform(Number).pipe(z.number().int().min(1).max(100)).optional().default(20),
  cursor: z.string().min(1).max(200).optional(),
});
