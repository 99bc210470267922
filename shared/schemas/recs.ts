import * as z from 'zod';
import { ID_PATTERN, POSITIVE_INT_PATTERN, intParam } from './common.ts';

/** `GET /v1/recommendations` query (api-decisions). */
export const recommendationsQuery = z.strictObject({
  user_id: z.string().min(1).max(256).optional(),
  item_id: z.string().regex(ID_PATTERN, 'item_id must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$').optional(),
  limit: intParam(1, 100).optional().default(20),
  context_id: z.string().regex(POSITIVE_INT_PATTERN, 'context_id must be a numeric console context ID').optional(),
  category: z.string().min(1).max(256).optional(),
  endpoint: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'endpoint is a serving endpoint name').optional(),
  include_seen: z.enum(['true', 'false'], { error: 'include_seen must be true or false' }).transform((v) => v === 'true').optional().default(false),
});
export type RecommendationsQuery = z.output<typeof recommendationsQuery>;
