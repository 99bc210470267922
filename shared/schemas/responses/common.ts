import * as z from 'zod/mini';
import { ID_PATTERN, POSITIVE_INT_PATTERN } from '../common.ts';
import { named } from '../doc.ts';

/*
 * Response schemas: what the handlers answer, as the OpenAPI document describes it and the
 * contract test (test/contract/) checks every answer the integration tests receive against.
 */

/** Unix seconds. */
export const seconds = z.int().check(z.nonnegative());
/** A server-generated numeric id of a Platform record. */
export const recordId = z.int().check(z.positive());
/** Any JSON object (item metadata, event payloads). */
export const anyObject = z.record(z.string(), z.unknown());
export const uuid = z.uuid();
/** Item ids in responses: the spec's pattern (always a positive integer's digits here). */
export const itemId = z.string().check(z.regex(ID_PATTERN));
export const eventId = z.string().check(z.regex(POSITIVE_INT_PATTERN));

/** The Core API list envelope of `item` at `url`. */
export const coreList = <T extends z.ZodMiniType>(item: T, url: string) =>
  z.strictObject({ object: z.literal('list'), data: z.array(item), has_more: z.boolean(), next_cursor: z.nullable(z.string()), url: z.literal(url) });

/** A Platform API list page: `next_cursor` goes back as `starting_after` (or `cursor`). */
export const platformPage = <T extends z.ZodMiniType>(item: T) => z.strictObject({ data: z.array(item), has_more: z.boolean(), next_cursor: z.nullable(z.string()) });

export const CORE_ERROR_TYPES = ['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'conflict_error', 'rate_limit_error', 'api_error'] as const;

export const coreError = named(
  'CoreError',
  z.strictObject({
    error: z.strictObject({
      type: z.enum(CORE_ERROR_TYPES),
      code: z.string(),
      message: z.string(),
      details: z.optional(z.strictObject({ fieldErrors: z.record(z.string(), z.array(z.string())) })),
      request_id: uuid,
    }),
  }),
  'The Core API error envelope. `details.fieldErrors` maps each invalid field (a dotted path, e.g. `3.user_id`) to its messages: the first 1000 fields in error at most (fewer when their text would take over 1 MB), the message then ending `The first 1000 of N fields in error are named.`',
);

export const platformError = named('PlatformError', z.strictObject({ error: z.string() }), 'The Platform API error envelope: one message.');

/** What API Gateway answers on its own (on AWS only): not one of the service's envelopes. */
export const gatewayMessage = named(
  'GatewayMessage',
  z.strictObject({ message: z.string() }),
  'API Gateway\'s own answer: on AWS, `{"message": "Too Many Requests"}` (429) past the stage\'s throttle and `{"message": "Internal Server Error"}` (500) when a function fails outright or times out; `{"message": "Request Entity Too Large"}` (413) for a body over 10 MiB, locally too. It carries no `X-Request-Id`.',
);

export const oauthError = named(
  'OAuthError',
  z.strictObject({
    error: z.enum(['invalid_request', 'invalid_client', 'unsupported_grant_type', 'invalid_scope', 'slow_down', 'server_error', 'temporarily_unavailable']),
    error_description: z.optional(z.string()),
  }),
  'RFC 6749 §5.2 error of the token endpoint.',
);
