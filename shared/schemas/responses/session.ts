import * as z from 'zod/mini';
import { CONSOLE_ROLES } from '../../console-auth/types.ts';
import { named } from '../doc.ts';
import { seconds } from './common.ts';

/*
 * The console's own routes (`/console/session`, `/console/api/*`): the session the console learns
 * about (never its id: that stays in the HttpOnly cookie), and the overview's chart. The other
 * console reads answer what their Core routes answer (SearchResults, RecommendationList, EventList).
 */

export const consoleSession = named(
  'ConsoleSession',
  z.strictObject({
    email: z.string(),
    tenant: z.string(),
    role: z.enum(CONSOLE_ROLES),
    csrf_token: z.string().check(z.regex(/^[A-Za-z0-9_-]{43}$/)),
    expires_at: seconds,
  }),
  'A signed-in console user: the tenant they work in, their role (`admin` may call every route, `viewer` only reads), the CSRF token to send as `X-CSRF-Token` on every request that changes something, and when the session ends (Unix seconds).',
);

export const consoleOverview = named(
  'ConsoleOverview',
  z.strictObject({
    events_per_day: z.array(z.strictObject({ day: z.iso.date(), count: z.int().check(z.nonnegative()) })),
    counted_from: z.nullable(z.iso.date()),
    latest_event_at: z.nullable(seconds),
  }),
  "Events ingested per UTC day (oldest first, one entry per day asked for), every one of them. `counted_from`: null when every stored event is counted; else the first day whose count is whole (events stored before this version kept its counts, by an earlier one, are in none). `latest_event_at`: the newest event's time, or null without events.",
);
