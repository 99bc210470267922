import * as z from 'zod/mini';
import { contextIdInBody, ID_PATTERN, intOf, intParam, jsonValue, limitParam, missingOr, numericId, unstorableProperties } from './common.ts';
import { EventNotFound } from '../domain/errors.ts';
import { documentAs, documentChecks } from './doc.ts';

export const MAX_EVENTS_PER_REQUEST = 500;
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_EVENT_BYTES = 32_768;
/** Unix seconds below this are before 5138 AD; a larger value is almost surely milliseconds. */
const MAX_SECONDS = 99_999_999_999;

/** Field names of the event resource; an event type may not take one of them. */
export const RESERVED_EVENT_FIELDS = new Set(['id', 'object', 'type', 'user_id', 'item_id', 'context_id', 'session_id', 'request_id', 'placement', 'occurred_at', 'created', 'metadata', 'event_id']);

const optionalText = z.optional(z.nullable(z.string().check(z.minLength(1), z.maxLength(256))));

const eventFields = z.catchall(
  z.object({
    type: z.string({ error: missingOr('type is required', 'type must be a string') }).check(
      z.regex(EVENT_TYPE_PATTERN, 'type must match ^[a-z][a-z0-9_]{0,63}$'),
      z.refine((t) => !RESERVED_EVENT_FIELDS.has(t), 'type may not be a reserved field name'),
    ),
    user_id: documentChecks(
      z.string({ error: missingOr('user_id is required', 'user_id must be a string') }).check(
        z.minLength(1, 'user_id must not be empty'),
        z.maxLength(256, 'user_id must be at most 256 characters'),
        // A path segment of "." or ".." is resolved away by URL parsers (clients' and servers'), so
        // `DELETE /api/users/{user_id}` could never name the user to erase them.
        z.refine((u) => u !== '.' && u !== '..', 'user_id may not be "." or ".." (a URL path cannot name it, so the user could not be erased)'),
      ),
      // The refinement, in the document (until 2026-12-08 it took both).
      { not: { enum: ['.', '..'] } },
    ),
    item_id: documentAs(
      z.pipe(
        z.pipe(
          z.union([z.string(), z.int().check(z.positive())], { error: missingOr('item_id is required (string or integer)', 'item_id must be a string or a positive integer') }),
          z.transform(String),
        ),
        z.string().check(z.regex(ID_PATTERN, 'item_id must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$')),
      ),
      z.union([z.string().check(z.regex(ID_PATTERN)), z.int().check(z.positive())]),
    ),
    context_id: z.optional(z.nullable(contextIdInBody)),
    // null is "not given" (the ingest time), as for the other nullable fields and any other `*_at`.
    occurred_at: z.optional(
      z.nullable(
        intOf('occurred_at', 'an integer (Unix seconds) or null', 'occurred_at must not be negative', 'occurred_at must be in Unix seconds, not milliseconds').check(
          z.gte(0, 'occurred_at must not be negative'),
          z.lte(MAX_SECONDS, 'occurred_at must be in Unix seconds, not milliseconds'),
        ),
      ),
    ),
    session_id: optionalText,
    request_id: z.optional(z.nullable(z.uuid('request_id must be a UUID'))),
    placement: optionalText,
  }),
  jsonValue,
);

const event = eventFields.check(
  z.superRefine((e, ctx) => {
    // Own properties only: a type named `constructor` or `toString` has no inherited payload.
    const payload = Object.hasOwn(e, e.type) ? e[e.type] : undefined;
    if (payload !== undefined && (payload === null || typeof payload !== 'object' || Array.isArray(payload))) {
      ctx.addIssue({ code: 'custom', path: [e.type], message: `${e.type} must be an object (the type-specific payload)` });
    }
    // Additional properties are kept, but not ones that would stand in for what the server sets.
    for (const f of ['id', 'object', 'created'] as const) {
      if (Object.hasOwn(e, f)) ctx.addIssue({ code: 'custom', path: [f], message: `${f} is set by the server; do not send it` });
    }
    // The spec's time conventions hold for additional properties too: no `created_at` in a Core
    // payload, and a `<verb>ed_at` time is integer Unix seconds (the type-named payload is the type's).
    for (const [f, v] of Object.entries(e)) {
      if (f === e.type) continue;
      if (f === 'created_at')
        ctx.addIssue({ code: 'custom', path: [f], message: 'created_at is not used in the Core API: the interaction time is occurred_at, the ingest time (created) is set by the server' });
      else if (f.endsWith('_at') && f !== 'occurred_at' && v !== null && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_SECONDS)) {
        ctx.addIssue({ code: 'custom', path: [f], message: `${f} is a time: integer Unix seconds (or null)` });
      }
    }
    const meta = Object.hasOwn(e, 'metadata') ? e.metadata : undefined;
    if (meta !== undefined && (meta === null || typeof meta !== 'object' || Array.isArray(meta))) {
      ctx.addIssue({ code: 'custom', path: ['metadata'], message: "metadata must be an object (kept inside the event's metadata, beside context_id and the type-named object)" });
    }
    const eventId = Object.hasOwn(e, 'event_id') ? e.event_id : undefined;
    if (eventId !== undefined && !(typeof eventId === 'number' && Number.isSafeInteger(eventId) && eventId > 0)) {
      ctx.addIssue({ code: 'custom', path: ['event_id'], message: 'event_id must be a positive integer' });
    }
    // Additional properties are stored one level down (in the row's `extra` map).
    // Each named by its property; the event's own fields, and times, have checks of their own (its payload, whatever its type's name, has none).
    for (const { key, message } of unstorableProperties(e, 1, (k) => k !== e.type && ((k !== 'metadata' && RESERVED_EVENT_FIELDS.has(k)) || k.endsWith('_at')))) {
      ctx.addIssue({ code: 'custom', path: [key], message });
    }
    if (Buffer.byteLength(JSON.stringify(e)) > MAX_EVENT_BYTES) {
      ctx.addIssue({ code: 'custom', path: [], message: `an event must serialise to at most ${MAX_EVENT_BYTES} bytes` });
    }
  }),
);

export const ingestEventsBody = z
  .array(event, { error: 'The body must be an array of events.' })
  .check(z.minLength(1, 'send 1 to 500 events'), z.maxLength(MAX_EVENTS_PER_REQUEST, 'send 1 to 500 events'));
export type IngestEventsBody = z.output<typeof ingestEventsBody>;
export type IngestEvent = IngestEventsBody[number];

export const eventPath = z.object({ event_id: numericId('event_id', (digits) => new EventNotFound(digits)) });

export const listEventsQuery = z.strictObject({
  limit: limitParam,
  starting_after: z.optional(numericId('starting_after')),
  user_id: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  type: z.optional(z.string().check(z.regex(/^[a-z][a-z0-9_]{0,63}$/, 'type must match ^[a-z][a-z0-9_]{0,63}$'))),
});

/**
 * The console's event list: the Core list's query, and `order` (`asc` by default, as Core lists;
 * `desc` for the newest first, `starting_after` then paging on to older events).
 */
export const consoleEventsQuery = z.strictObject({
  ...listEventsQuery.shape,
  order: z.optional(z.enum(['asc', 'desc'])),
});
export type ConsoleEventsQuery = z.output<typeof consoleEventsQuery>;

/** `GET /console/api/overview?days=`: 1 to 90 days (default 14). */
export const overviewQuery = z.strictObject({ days: documentAs(z._default(z.optional(intParam(1, 90, 'days')), 14), z._default(z.optional(z.int().check(z.gte(1), z.lte(90))), 14)) });
