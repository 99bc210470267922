import type { components } from '../../packages/client/src/schema.ts';
import type { TrainingJob, TrainingJobLogs } from '../../packages/client/src/types.ts';

/**
 * The console's only way to the service: same-origin fetches with the session cookie (HttpOnly,
 * never seen here) and, on every request, the CSRF token of the session this tab signed in with
 * (the service refuses a read that sends another session's: the cookie is one for all tabs).
 * No API key or Core token ever reaches the browser.
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Who this tab is signed in as, and the session's CSRF token (null: signed out). */
interface Held {
  email: string;
  tenant: string;
  role: string;
  csrf_token: string;
}
let held: Held | null = null;
let onSignedOut: ((reason?: string) => void) | undefined;
let onSessionRead: ((s: Session) => void) | undefined;

/** The session this tab works in (what sign-in or the session read answered), or null once signed out. */
export const holdSession = (s: Held | null): void => {
  held = s ? { email: s.email, tenant: s.tenant, role: s.role, csrf_token: s.csrf_token } : null;
};
/** `fn` runs when a request finds this tab's session over (401, or another user's in its place): the app shows sign-in. */
export const whenSignedOut = (fn: (reason?: string) => void): void => {
  onSignedOut = fn;
};
/**
 * `fn` runs with the session a request read again when it found this tab's replaced by the same
 * user's (signed in anew in another tab, maybe with another role): the app holds it and shows
 * that role's controls (until 2026-12-05 a demoted user's tab kept showing an admin's).
 */
export const whenSessionRead = (fn: (s: Session) => void): void => {
  onSessionRead = fn;
};

function messageOf(data: unknown, status: number): string {
  if (data && typeof data === 'object' && 'error' in data) {
    const e = (data as { error: unknown }).error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  }
  return status >= 500 ? `The service failed to answer (HTTP ${status}); try again in a moment.` : `Request failed (HTTP ${status})`;
}

/** What the service says of a request sent with another session's CSRF token (signed in again in another tab). */
const STALE_CSRF = /X-CSRF-Token/;
/** What the service says of a change a viewer may not make (this tab's session may have been demoted at its check). */
const VIEWER_ONLY = /A viewer may only read/;

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

async function send(method: Method, path: string, body: unknown, token: string): Promise<{ status: number; ok: boolean; data: unknown }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // Reads too: they must not be answered from a session other than the one this tab shows.
  if (token) headers['x-csrf-token'] = token;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch {
    // The browser's own words ("Failed to fetch") say nothing to a user.
    throw new ApiFailure(0, 'The service could not be reached: check the connection and that the service is running, then try again.');
  }
  if (res.status === 204) return { status: 204, ok: true, data: undefined };
  const text = await res.text();
  let data: unknown = text;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON (a proxy's error page) */
  }
  return { status: res.status, ok: res.ok, data };
}

/** The same user and tenant, any role (a session read again after another tab signed in anew). */
const sameUser = (a: Held, b: unknown): b is Session => {
  const x = b as Partial<Session> | undefined;
  // Not the role: the same user's session whose role a check changed is still theirs (until
  // 2026-12-05 its tab was signed out, saying someone else had signed in); its role is what the
  // tab shows from then on, so it must be one.
  return x?.email === a.email && x.tenant === a.tenant && typeof x.role === 'string' && typeof x.csrf_token === 'string';
};

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const sentWith = held?.csrf_token ?? '';
  let r = await send(method, path, body, sentWith);
  // Signed in again in another tab: this tab's token is the old session's. The session (shared by
  // the tabs' cookie) is read again: the same user's, the request is sent once more with its token;
  // another user's (or another tenant's), nothing is sent or read for them and this tab signs in anew.
  if (r.status === 403 && held && STALE_CSRF.test(messageOf(r.data, r.status))) {
    const current = await send('GET', '/console/session', undefined, '');
    if (current.ok && sameUser(held, current.data)) {
      // Held here, and by the app (which shows the role read, an admin's controls or not).
      holdSession(current.data);
      onSessionRead?.(current.data);
      if (current.data.csrf_token !== sentWith) r = await send(method, path, body, current.data.csrf_token);
    } else {
      held = null;
      const why = current.ok ? 'Someone else signed in to the console in another tab of this browser' : 'Your session has ended';
      const what = method === 'GET' ? 'Nothing of theirs is shown here.' : 'What you were doing here was not sent.';
      onSignedOut?.(`${why}: sign in again. ${what}`);
      throw new ApiFailure(401, `${why}; ${method === 'GET' ? 'nothing was read' : 'nothing was sent'}.`);
    }
  }
  // Refused as a viewer's while this tab shows an admin: the session's check took the user's new
  // role (demoted with the same session, no new sign-in). The session is read again so the tab
  // shows that role (until 2026-12-05 it kept showing an admin's controls, each change refused).
  if (r.status === 403 && held?.role === 'admin' && VIEWER_ONLY.test(messageOf(r.data, r.status))) {
    const current = await send('GET', '/console/session', undefined, '');
    if (current.ok && held && sameUser(held, current.data)) {
      holdSession(current.data);
      onSessionRead?.(current.data);
    }
  }
  if (!r.ok) {
    if (r.status === 401 && path !== '/console/session') onSignedOut?.();
    throw new ApiFailure(r.status, messageOf(r.data, r.status));
  }
  return r.data as T;
}

export const qs = (params: Record<string, string | number | boolean | undefined>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
};

// Shapes of what the console reads: the API's own, generated from its OpenAPI document and named
// by the client package (type-only imports and exports: nothing of the package reaches the bundle).
export type {
  ApiKey,
  ApiKeyCreated,
  Client,
  ClientCreated,
  Context,
  EventList,
  EventType,
  Item,
  ModelVersion,
  Rule,
  SearchHit,
  Segment,
  SynonymSet,
  Template,
} from '../../packages/client/src/types.ts';
export type {
  Event as EventRow,
  ItemSearchResults as ItemSearchResult,
  ModelEndpoint as Endpoint,
  RecommendationList as RecsResult,
  RerankControls as Rerank,
  SearchResults as SearchResult,
  TrainingJob as Job,
  TrainingJobLogs as JobLogs,
} from '../../packages/client/src/types.ts';

type Schemas = components['schemas'];
export type Session = Schemas['ConsoleSession'];
export type Overview = Schemas['ConsoleOverview'];
export type IndexStatus = Schemas['SearchIndexStatus'];
export type Explain = Schemas['Explanation'];
export type JobStatus = TrainingJob['status'];
/** A run's statuses before it ends: the Training page follows these, the Overview counts them. */
export const ACTIVE_JOB: ReadonlySet<JobStatus> = new Set<JobStatus>(['Queued', 'InProgress', 'Stopping']);
export type LogLine = TrainingJobLogs['lines'][number];
export type Comparison = Schemas['ModelComparison'];
/** An experiment as its list returns it: with the results so far. */
export type Experiment = Schemas['ExperimentWithResults'];
export type AuditEntry = Schemas['AuditEntry'];
export type SynonymSetList = Schemas['SynonymSetList'];
export type SearchAnalytics = Schemas['SearchAnalytics'];

/** A page of a list: its rows and the cursor of the next page. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The Platform's lists page with `limit` (at most 100) and `starting_after`: one page of one, after the cursor given. */
export const listPage = <T>(path: string, after?: string, params: Record<string, string | number | undefined> = {}): Promise<Page<T>> =>
  api<Page<T>>('GET', `${path}${qs({ limit: 100, ...params, starting_after: after })}`);

/** A whole list, page after page: what a picker offers (contexts, endpoints, templates, event types) is never cut at a page. */
export async function listAll<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<Page<T>> {
  const data: T[] = [];
  for (let after: string | undefined; ; ) {
    const page = await listPage<T>(path, after, params);
    data.push(...page.data);
    if (!page.has_more || !page.next_cursor) return { data, has_more: false, next_cursor: null };
    after = page.next_cursor;
  }
}
