import * as z from 'zod/mini';
import { ID_PATTERN, contextIdText, limitParam } from './common.ts';
import { categoryParam } from './items.ts';

/** `GET /v1/recommendations` query (api-decisions). */
export const recommendationsQuery = z.strictObject({
  user_id: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  item_id: z.optional(z.string().check(z.regex(ID_PATTERN, 'item_id must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$'))),
  limit: limitParam,
  context_id: z.optional(contextIdText),
  category: categoryParam,
  endpoint: z.optional(z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'endpoint is a serving endpoint name'))),
  include_seen: z._default(
    z.optional(
      z.pipe(
        z.enum(['true', 'false'], { error: 'include_seen must be true or false' }),
        z.transform((v: 'true' | 'false') => v === 'true'),
      ),
    ),
    false,
  ),
  /** Adds to each element why it is there: base score, rules applied, rerank steps, experiment variant. */
  explain: z._default(
    z.optional(
      z.pipe(
        z.enum(['true', 'false'], { error: 'explain must be true or false' }),
        z.transform((v: 'true' | 'false') => v === 'true'),
      ),
    ),
    false,
  ),
});
export type RecommendationsQuery = z.output<typeof recommendationsQuery>;
