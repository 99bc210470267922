import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../auth/secrets.ts';
import { config } from '../config.ts';
import { consoleSessionStore } from '../data/index.ts';
import { InvalidInput } from '../domain/errors.ts';
import { AuthenticationError, PermissionError } from '../errors.ts';
import { header } from '../http/base.ts';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from './headers.ts';
import type { HttpEvent } from '../http/types.ts';
import type { ConsoleSession, ConsoleUser } from './types.ts';
import { nowSeconds } from '../clock.ts';
import { recheckSession } from './recheck.ts';
import { consoleIdentity } from './users.ts';

/** The session cookie: HttpOnly, Secure, SameSite=Strict, whole origin. */
export const SESSION_COOKIE = 'rs_console_session';
/** The header a session's mutating requests carry its CSRF token in (a read may: then it must be the session's). */
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** The value of a cookie of the request (API Gateway v2 moves cookies to `event.cookies`). */
export function cookieOf(event: HttpEvent, name: string): string | undefined {
  const all = [...(event.cookies ?? []), ...(header(event, 'cookie') ?? '').split(';')];
  for (const c of all) {
    const i = c.indexOf('=');
    if (i > 0 && c.slice(0, i).trim() === name) return c.slice(i + 1).trim();
  }
  return undefined;
}

export const sessionCookie = (id: string, maxAge: number): string => `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Strict`;
export const clearedCookie = (): string => `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;

/**
 * Who a console session acts as, for the request's state: its tenant, `admin` for an admin (a
 * viewer no scope), and the audit trail's actor `console:<email>` (docs/api.md; the console's
 * Audit page reads that prefix).
 */
export const sessionCaller = (s: ConsoleSession) => ({ tenant: s.tenant, scopes: s.role === 'admin' ? ['admin'] : [], actor: `console:${s.email}` });

/** What the console learns about its session (never the session id: that stays in the cookie). */
export const sessionView = (s: ConsoleSession) => ({ email: s.email, tenant: s.tenant, role: s.role, csrf_token: s.csrf_token, expires_at: s.expires_at });

/** A new session for `user`: its id (the cookie's value) and the stored record. */
export async function openSession(user: ConsoleUser, now = nowSeconds()): Promise<{ id: string; session: ConsoleSession }> {
  const id = randomBytes(32).toString('base64url');
  const session: ConsoleSession = { ...user, csrf_token: randomBytes(32).toString('base64url'), created: now, expires_at: now + config().console.sessionSeconds };
  await consoleSessionStore().put(sha256Hex(id), session);
  return { id, session };
}

/**
 * The live session the request's cookie names, or undefined (no cookie, unknown, expired).
 * `check` (default): with its user read again when its last check is CONSOLE_USER_CHECK_SECONDS
 * old (recheck.ts): its role as the user's now, or 401 with the cookie cleared when that ended it.
 */
export async function sessionOf(event: HttpEvent, opts: { check?: boolean; now?: number } = {}): Promise<ConsoleSession | undefined> {
  const { check = true, now = nowSeconds() } = opts;
  const id = cookieOf(event, SESSION_COOKIE);
  if (!id || !SESSION_ID.test(id)) return undefined;
  const idHash = sha256Hex(id);
  const sessions = consoleSessionStore();
  const s = await sessions.get(idHash);
  if (!s || s.expires_at <= now) return undefined;
  if (!check) return s;
  const live = await recheckSession(idHash, s, now, { identity: consoleIdentity, sessions, intervalSeconds: config().console.userCheckSeconds });
  if (!live)
    throw new AuthenticationError('This console session has ended: its user was removed, disabled, moved to another tenant or changed (a new password). Sign in again.', {
      'set-cookie': clearedCookie(),
    });
  return live;
}

/** Ends the request's session, if any. */
export async function endSession(event: HttpEvent): Promise<void> {
  const id = cookieOf(event, SESSION_COOKIE);
  if (id && SESSION_ID.test(id)) await consoleSessionStore().delete(sha256Hex(id));
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
export const isSafeMethod = (method: string): boolean => SAFE.has(method.toUpperCase());

/**
 * Sign-in must come from the console's own pages (or a client that is no browser): a JSON body
 * (a cross-site HTML form can send `text/plain` with JSON-looking text, not `application/json`
 * without a CORS preflight), and not from another site by the browser's own word
 * (`Sec-Fetch-Site`). Otherwise any site could sign its visitors into an account of its choosing
 * (login CSRF), which the session cookie's SameSite does not prevent: it governs sending cookies,
 * not setting them on a top-level navigation.
 */
export function checkSignInRequest(event: HttpEvent): void {
  const type = (header(event, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new InvalidInput('Sign-in takes a JSON body: send Content-Type: application/json.');
  const site = header(event, 'sec-fetch-site')?.toLowerCase();
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new PermissionError('Sign in from the console itself: this request came from another site.');
}

const equalSecrets = (sent: string | undefined, expected: string): boolean => {
  const a = Buffer.from(sent ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * The address a sign-in counts against: the browser's. Behind the console's CloudFront
 * distribution API Gateway sees the edge server, which every user near it shares, so the
 * distribution sends the viewer's address (set by its viewer-request function, whatever the
 * browser sent) and its origin a secret (CONSOLE_ORIGIN_VERIFY): only a request carrying that
 * secret is believed. Any other (the API's own URL called directly, the local server) counts by
 * its source address.
 */
export function signInAddress(event: HttpEvent): string {
  const secret = config().console.originVerify;
  const viewer = header(event, VIEWER_ADDRESS_HEADER);
  if (secret && viewer && equalSecrets(header(event, ORIGIN_VERIFY_HEADER), secret)) return viewer;
  return event.requestContext.http.sourceIp;
}

/**
 * A request that may change something must carry the session's CSRF token. A read need not, but
 * one that sends a token must send this session's: the console sends the token of the session its
 * tab signed in with on every request, so a tab whose session another tab replaced (the cookie is
 * the browser's, one for all tabs) is refused, not answered with the other session's data under
 * its own user's and tenant's name.
 */
export function checkCsrf(event: HttpEvent, s: ConsoleSession): void {
  const sent = header(event, CSRF_HEADER);
  if (isSafeMethod(event.requestContext.http.method)) {
    if (sent !== undefined && !equalSecrets(sent, s.csrf_token)) {
      throw new PermissionError("This X-CSRF-Token is not this session's: the console was signed in anew (in another tab?) since it was given. Read the session again (GET /console/session).");
    }
    return;
  }
  if (!equalSecrets(sent, s.csrf_token)) {
    throw new PermissionError('Missing or wrong X-CSRF-Token header for this session.');
  }
}

/**
 * The session a console request runs under: 401 without a live one, 403 without its CSRF token
 * on a request that changes something, 403 for a viewer on a route that writes (`writes`).
 */
export async function requireSession(event: HttpEvent, opts: { writes: boolean }): Promise<ConsoleSession> {
  const s = await sessionOf(event);
  if (!s) throw new AuthenticationError('Sign in to the console first (no valid session cookie).');
  checkCsrf(event, s);
  if (opts.writes && s.role !== 'admin') throw new PermissionError('A viewer may only read: this needs the admin role.');
  return s;
}
