import * as z from 'zod/mini';
import { named } from '../doc.ts';
import { anyObject, coreList, eventId, itemId, recordId, seconds, uuid } from './common.ts';

/** Core API resources (shared/domain/present.ts) and what the Core routes answer. */

export const item = named(
  'Item',
  z.strictObject({
    id: itemId,
    object: z.literal('item'),
    name: z.string(),
    description: z.optional(z.string()),
    metadata: anyObject,
    active: z.boolean(),
    created: seconds,
    updated_at: seconds,
    embedding_updated_at: z.nullable(seconds),
  }),
  'A catalog item. `embedding_updated_at`: when its current content was last embedded (null until then).',
);

export const event = named(
  'Event',
  z.looseObject({
    id: eventId,
    object: z.literal('event'),
    type: z.string(),
    user_id: z.string(),
    item_id: z.string(),
    session_id: z.nullable(z.string()),
    request_id: z.nullable(z.string()),
    context_id: z.nullable(z.string()),
    placement: z.nullable(z.string()),
    metadata: anyObject,
    occurred_at: seconds,
    created: seconds,
  }),
  'A user interaction event. The type-specific payload is a property named after `type` (mirrored inside `metadata`); other properties sent at ingest are returned as sent.',
);

export const itemList = named('ItemList', coreList(item, '/v1/items'));
export const eventList = named('EventList', coreList(event, '/v1/events'));

export const itemDeleted = named('ItemDeleted', z.strictObject({ message: z.string(), itemId: recordId, deletedCount: z.int(), processing_time_ms: z.int() }));

const experimentRef = z.strictObject({ id: recordId, variant: z.string() });

/** Why an element is where it is (`explain: true`). */
export const explanation = named(
  'Explanation',
  z.strictObject({
    base_score: z.number(),
    rules: z.array(z.strictObject({ id: recordId, name: z.string(), boost: z.number() })),
    score_after_rules: z.number(),
    rerank: z.array(
      z.union([
        z.strictObject({ control: z.enum(['popularity_weight', 'freshness_weight']), added: z.number() }),
        z.strictObject({ control: z.enum(['diversity', 'max_per_category']), moved_from: z.int(), moved_to: z.int() }),
      ]),
    ),
    final_score: z.number(),
    experiment: z.nullable(experimentRef),
  }),
);

export const recommendation = named(
  'Recommendation',
  z.strictObject({
    object: z.literal('recommendation'),
    item_id: itemId,
    rank: z.int().check(z.positive()),
    score: z.number(),
    reason: z.string(),
    item,
    explain: z.optional(explanation),
  }),
);

export const recommendationList = named(
  'RecommendationList',
  z.extend(coreList(recommendation, '/v1/recommendations'), {
    request_id: uuid,
    model: z.nullable(z.strictObject({ endpoint: z.string(), version: recordId })),
    experiment: z.optional(experimentRef),
    strategy: z.string(),
  }),
  '`request_id` attributes later events to this answer; `strategy` is `personalized`, `similar` or `popular`.',
);

/** An item as search answers it: with its score, and on request why and where it matched. */
export const searchHit = named(
  'SearchHit',
  z.extend(item, {
    score: z.number(),
    explain: z.optional(explanation),
    highlight: z.optional(z.strictObject({ name: z.string(), description: z.nullable(z.string()) })),
  }),
);

export const facet = named(
  'Facet',
  z.strictObject({
    count: z.int(),
    values: z.array(z.strictObject({ value: z.union([z.string(), z.boolean()]), count: z.int() })),
    values_truncated: z.boolean(),
    min: z.nullable(z.number()),
    max: z.nullable(z.number()),
  }),
  "Over every match: the most frequent string (or boolean) values of a metadata key, and the range of its numbers. `values_truncated`: the key has values not listed in `values`: more than the 100 most frequent, or values cut for the answer to fit Lambda's 6 MB (`facets` take at most 1,000,000 bytes; `count`, `min` and `max` stay whole).",
);

export const searchResults = named(
  'SearchResults',
  z.extend(coreList(searchHit, '/v1/search'), {
    total: z.int(),
    request_id: uuid,
    experiment: z.optional(experimentRef),
    facets: z.optional(z.record(z.string(), facet)),
  }),
  '`total`: how many items match the query and filters, counted exactly (api-decisions allows an estimate; this service counts every match).',
);

export const tokenResponse = named('AccessToken', z.strictObject({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.int().check(z.positive()) }));

export const health = named('Health', z.strictObject({ status: z.literal('ok') }));
