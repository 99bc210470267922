import * as z from 'zod/mini';
import * as R from '../schemas/responses/core.ts';
import { created, ok, op, type OperationDoc } from './operation.ts';

const EXAMPLE_ITEM = {
  id: '1',
  object: 'item',
  name: 'Trail running shoe',
  description: 'Light shoe for rough ground',
  metadata: { category: 'shoes', brand: 'Acme', price: 12900, currency: 'EUR' },
  active: true,
  created: 1767225600,
  updated_at: 1767225600,
  embedding_updated_at: null,
};

/** The token endpoint's form (RFC 6749 §4.4): the client itself authenticates with HTTP Basic. */
export const tokenForm = z.strictObject({
  grant_type: z.literal('client_credentials'),
  // The Basic client's own id may be sent again (RFC 6749 §2.3.1); another id is 400.
  client_id: z.optional(z.string()),
  scope: z.optional(z.string().check(z.regex(/^\S+( \S+)*$/))),
});

/** The Core API, the token endpoint and the public routes, by route key. */
export const coreOperations: Record<string, OperationDoc> = {
  'POST /v1/items': op(
    'createItems',
    'Items',
    'Create one item, or 1 to 100 at once',
    created(z.union([R.item, R.itemList]), 'The item (a single-item body), or a list of every created item (an array body).'),
    {
      description: 'The server generates each item ID: a body naming `id`, `item_id` or `itemId` is 400. Honours `Idempotency-Key`.',
      errors: [409],
      examples: {
        request: { name: 'Trail running shoe', description: 'Light shoe for rough ground', metadata: { category: 'shoes', brand: 'Acme', price: 12900, currency: 'EUR' } },
        response: EXAMPLE_ITEM,
      },
    },
  ),
  'GET /v1/items': op('listItems', 'Items', 'List items, ascending by ID', ok(R.itemList, 'A page of items.')),
  'GET /v1/items/{item_id}': op('getItem', 'Items', 'Read an item', ok(R.item, 'The item.'), { examples: { response: EXAMPLE_ITEM } }),
  'POST /v1/items/{item_id}': op('updateItem', 'Items', 'Update an item', ok(R.item, 'The updated item.'), {
    description: "Each field sent replaces the item's (`metadata` whole). A change of `name`, `description` or `metadata` refreshes the embedding.",
    examples: { request: { active: false } },
  }),
  'PATCH /v1/items/{item_id}': op('patchItem', 'Items', 'Update an item (alias of POST)', ok(R.item, 'The updated item.')),
  'DELETE /v1/items/{item_id}': op('deleteItem', 'Items', 'Delete an item', ok(R.itemDeleted, 'What was deleted.')),
  'POST /v1/events': op('ingestEvents', 'Events', 'Send 1 to 500 events (all or nothing)', created(R.eventList, 'The stored events, in request order.'), {
    description: 'Honours `Idempotency-Key`. A failed element rejects the whole request, with `fieldErrors` keyed like `3.user_id`.',
    errors: [409],
    examples: {
      request: [
        { type: 'click', user_id: 'u-42', item_id: '1', click: {} },
        { type: 'purchase', user_id: 'u-42', item_id: '1', purchase: { amount: 12900, currency: 'EUR' }, context_id: '1' },
      ],
    },
  }),
  'GET /v1/events': op('listEvents', 'Events', 'List events, ascending by ID', ok(R.eventList, 'A page of events.')),
  'GET /v1/events/{event_id}': op('getEvent', 'Events', 'Read an event', ok(R.event, 'The event.')),
  'POST /v1/search': op('search', 'Search', 'Search the catalog', ok(R.searchResults, 'A page of matching items, best first.'), {
    description: 'Hybrid (keyword and semantic) by default; typo tolerant, the last term matched as a prefix. Inactive items never appear.',
    errors: [404],
    examples: { request: { query: 'trail shoe', filters: { category: 'shoes', price: { lte: 15000 } }, limit: 10 } },
  }),
  'GET /v1/recommendations': op('getRecommendations', 'Recommendations', 'Recommend items for a user or like an item', ok(R.recommendationList, 'Ranked recommendations.'), {
    description: 'Send `user_id`, `item_id` or both (neither: 400 `parameter_missing`). A user without history, or a tenant without a promoted model, gets popular items.',
    errors: [404],
  }),
  'POST /oauth2/token': op('createToken', 'Auth', 'Exchange client credentials for an access token', ok(R.tokenResponse, 'An access token (a JWT) for the Core API.'), {
    description:
      "OAuth 2.0 client credentials (RFC 6749 §4.4): the client ID and secret as HTTP Basic authentication, a form body. `scope`, if sent, is a space-separated subset of the client's scopes; `client_id`, if sent, must be the Basic client's own (another id, or `client_secret` in the form, is 400 `invalid_request`). Served by Cognito on AWS (`{auth_url}`), by the local stack at the same path.",
    form: tokenForm,
    examples: { request: { grant_type: 'client_credentials', scope: 'service-api/read' }, response: { access_token: 'eyJraWQiOi...', token_type: 'Bearer', expires_in: 3600 } },
  }),
  'GET /openapi.json': op('getOpenApi', 'Meta', 'This document', ok(z.record(z.string(), z.unknown()), 'The OpenAPI 3.1 document of the Core API, the Platform API and the token endpoint.')),
  'GET /health': op('getHealth', 'Meta', 'Health check', ok(R.health, 'The service and its table answer.'), {
    description: 'One cheap read of the table; 503 (code `unavailable`) when it does not answer.',
    errors: [503],
  }),
};
