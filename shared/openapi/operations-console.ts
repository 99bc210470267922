import * as R from '../schemas/responses/core.ts';
import * as S from '../schemas/responses/session.ts';
import { SESSION_COOKIE } from '../console-auth/session.ts';
import { NO_STORE, noContent, ok, op, type OperationDoc } from './operation.ts';

/*
 * The console's own routes (on the Platform base, authorised by the console session cookie, see
 * the `consoleSession` security scheme): sign-in sessions, and the Core reads the console shows,
 * run server-side for the session's tenant.
 */
const SESSION = 'Console session';
const READS = 'Console reads';

const SESSION_EXAMPLE = { email: 'admin@example.com', tenant: 'demo', role: 'admin', csrf_token: 'q9Zc1v0m2Xr7b3KfJt8WnL4yPa6Hs5DgUe0oRi1TxYw', expires_at: 1767254400 };

/** The console's routes, by route key. */
export const consoleOperations: Record<string, OperationDoc> = {
  'POST /console/session': op('createConsoleSession', SESSION, 'Sign in to the console', ok(S.consoleSession, 'Signed in: the session (with its CSRF token); its id is only in the cookie.'), {
    description: `Checks the email and password (and, for a Cognito user with MFA, \`mfa_code\`) and opens a session: its id goes only into the HttpOnly cookie \`${SESSION_COOKIE}\` (\`Set-Cookie\`), never into the body. A wrong email or password is 401 (never which of the two); repeated failures from one address or for one email are 429 for a while. Needs no credential. The body must be sent as \`Content-Type: application/json\` (else 400), and a browser request from another site (\`Sec-Fetch-Site\` other than \`same-origin\` or \`none\`) is 403: no other site can sign its visitors in.`,
    errors: [400, 401, 403, 429],
    headers: {
      'Set-Cookie': {
        description: `The session: \`${SESSION_COOKIE}=<id>; Path=/; Max-Age=<seconds>; HttpOnly; Secure; SameSite=Strict\`.`,
        schema: { type: 'string', pattern: `^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; ` },
      },
      ...NO_STORE,
    },
    examples: { request: { email: 'admin@example.com', password: 'correct horse battery staple' }, response: SESSION_EXAMPLE },
  }),
  'GET /console/session': op('getConsoleSession', SESSION, 'Who is signed in (and the CSRF token)', ok(S.consoleSession, 'The live session the cookie names.'), {
    description: 'How the console learns, after a reload, who is signed in and the CSRF token it sends with its writes. 401 without a live session (no cookie, unknown, expired or signed out).',
    errors: [401],
    headers: NO_STORE,
    examples: { response: SESSION_EXAMPLE },
  }),
  'DELETE /console/session': op('deleteConsoleSession', SESSION, 'Sign out', noContent('Signed out: the session is ended at once and the cookie cleared.'), {
    description: 'Ends the session the cookie names (it needs its `X-CSRF-Token`, else 403) and clears the cookie; without a live session it only clears the cookie.',
    headers: {
      'Set-Cookie': { description: `Clears the cookie: \`${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict\`.`, schema: { type: 'string' } },
      ...NO_STORE,
    },
  }),
  'PATCH /console/api/items/{item_id}': op('consoleUpdateItem', 'Console writes', 'Update an item (console catalog)', ok(R.item, 'The updated item (as `POST /v1/items/{item_id}` answers).'), {
    description:
      "What `POST /v1/items/{item_id}` does, for the session's tenant: same body (`name`, `description`, `metadata`, `active`: the fields sent replace the item's), same answer. The catalog page uses it to take an item out of recommendations and search (`active: false`) or put it back. Admins only; it needs the session's `X-CSRF-Token`. An unknown item is 404.",
    errors: [401, 403, 404],
    examples: { request: { active: false } },
  }),
  'POST /console/api/search': op('consoleSearch', READS, 'Search the catalog (console playground)', ok(R.searchResults, 'A page of matching items, best first (as `POST /v1/search` answers).'), {
    description:
      "What `POST /v1/search` does, for the session's tenant: same body, same answer. A playground request is not traffic: no experiment exposure is counted, no search analytics recorded. A read, so a viewer may run it; as a POST it needs the session's `X-CSRF-Token`.",
    errors: [401, 404],
    examples: { request: { query: 'running', facets: ['brand'], highlight: true, explain: true } },
  }),
  'GET /console/api/recommendations': op(
    'consoleRecommendations',
    READS,
    'Recommend items (console playground)',
    ok(R.recommendationList, 'Ranked recommendations (as `GET /v1/recommendations` answers).'),
    {
      description: "What `GET /v1/recommendations` does, for the session's tenant: same query, same answer; no experiment exposure is counted.",
      errors: [401, 404],
    },
  ),
  'GET /console/api/events': op('consoleListEvents', READS, 'List events (console events page)', ok(R.eventList, 'A page of events (as `GET /v1/events` answers).'), {
    description: "What `GET /v1/events` does, for the session's tenant: same query, same answer; `order=desc` lists the newest first (`starting_after` then pages on to older events).",
    errors: [401],
  }),
  'GET /console/api/overview': op('consoleOverview', READS, 'Events per day (console overview)', ok(S.consoleOverview, 'Events per UTC day over the last `days`.'), {
    description:
      "Events ingested per UTC day over the last `days` (1 to 90, default 14; another value is 400), every one of them: each ingest adds its events to its day's count, so the answer reads a few rows whatever the tenant's log holds.",
    errors: [401],
    examples: {
      response: {
        events_per_day: [
          { day: '2026-01-01', count: 12 },
          { day: '2026-01-02', count: 0 },
        ],
        counted_from: null,
        latest_event_at: 1767280000,
      },
    },
  }),
};
