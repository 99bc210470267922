import * as z from 'zod/mini';
import { CORE_SCOPES, PLATFORM_SCOPES, type CoreScope, type PlatformScope } from '../../routes.ts';
import { named } from '../doc.ts';
import { platformPage, recordId, seconds } from './common.ts';
import { searchHit } from './core.ts';

/** Platform API answers of credentials, item search, the search index and search administration. */

export const client = named('Client', z.strictObject({ client_id: z.string(), name: z.string(), scopes: z.array(z.enum(CORE_SCOPES as [CoreScope, ...CoreScope[]])), created: seconds }));
export const clientCreated = named('ClientCreated', z.extend(client, { client_secret: z.string() }), 'The secret is shown here once; only its hash is kept.');
export const clientList = named('ClientList', platformPage(client));
export const clientDeleted = named('ClientDeleted', z.strictObject({ client_id: z.string(), deleted: z.literal(true) }), 'The client deleted: its tokens stop working at once.');

export const apiKey = named(
  'ApiKey',
  z.strictObject({
    id: z.string(),
    prefix: z.string(),
    name: z.string(),
    environment: z.string(),
    scopes: z.array(z.enum(PLATFORM_SCOPES as [PlatformScope, ...PlatformScope[]])),
    created: seconds,
  }),
);
export const apiKeyCreated = named(
  'ApiKeyCreated',
  z.extend(apiKey, { key: z.string().check(z.regex(/^svc_[a-z0-9]{8}_/)) }),
  'The key (`svc_<prefix>_<token>`) is shown here once; only its SHA-256 is kept.',
);
export const apiKeyList = named('ApiKeyList', platformPage(apiKey));
export const apiKeyDeleted = named('ApiKeyDeleted', z.strictObject({ id: z.string(), deleted: z.literal(true) }), 'The key revoked, by its id (the 8-character prefix).');
/** A deleted console record (rule, segment, synonym set), by its numeric id. */
export const recordDeleted = named('RecordDeleted', z.strictObject({ id: recordId, deleted: z.literal(true) }));

export const platformSearchResults = named(
  'ItemSearchResults',
  z.extend(platformPage(searchHit), { total: z.int() }),
  'Items matching the query and filters, inactive ones included; `next_cursor` goes back as `cursor`.',
);

export const indexStatus = named(
  'SearchIndexStatus',
  z.strictObject({
    items: z.int(),
    embedded: z.int(),
    pending: z.int(),
    updated_at: z.nullable(seconds),
    index_built_at: z.nullable(seconds),
    changes_since_build: z.int(),
  }),
  '`updated_at`: the latest item change search reflects.',
);

export const indexRebuild = named('SearchIndexRebuild', z.strictObject({ status: z.literal('Queued'), requested_at: seconds }));

export const synonymSet = named(
  'SynonymSet',
  z.strictObject({ id: recordId, type: z.enum(['two_way', 'one_way']), input: z.nullable(z.string()), synonyms: z.array(z.string()), created: seconds, updated_at: seconds }),
);
export const synonymList = named('SynonymSetList', z.strictObject({ data: z.array(synonymSet), has_more: z.boolean(), next_cursor: z.nullable(z.string()) }));

const counts = {
  searches: z.int(),
  no_results: z.int(),
  clicks: z.int(),
  conversions: z.int(),
  click_through_rate: z.number(),
  conversion_rate: z.number(),
  events: z.record(z.string(), z.int()),
  searches_with: z.record(z.string(), z.int()),
};
export const searchAnalytics = named(
  'SearchAnalytics',
  z.strictObject({
    object: z.literal('search_analytics'),
    from: z.string(),
    to: z.string(),
    click_type: z.string(),
    conversion_type: z.string(),
    totals: z.strictObject({ ...counts, queries: z.int() }),
    top_queries: z.array(z.strictObject({ query: z.string(), ...counts })),
    no_result_queries: z.array(z.strictObject({ query: z.string(), searches: z.int(), no_results: z.int() })),
    complete: z.boolean(),
  }),
  'Over the UTC days from..to: totals, the top queries and the queries without results, with click-through and conversion rates.',
);
