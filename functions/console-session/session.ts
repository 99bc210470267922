import * as z from 'zod/mini';
import { checkCsrf, checkSignInRequest, clearedCookie, endSession, sessionCookie, sessionOf, sessionView, signInAddress } from '#shared/console-auth/session';
import { signIn } from '#shared/console-auth/sign-in';
import { AuthenticationError } from '#shared/errors';
import { byRouteKey, httpHandler, type RouteHandler } from '#shared/http/handler';
import { logger } from '#shared/observability';

/**
 * Console sign-in sessions, the three routes in one module (one function, the only one granted
 * Cognito's admin sign-in calls): the event's route key picks the handler.
 */
const NAME = 'console-session/session';

const signInBody = z.strictObject({
  email: z.string().check(z.minLength(3), z.maxLength(320)),
  password: z.string().check(z.minLength(1), z.maxLength(256)),
  /** A one-time code, for Cognito users with MFA. */
  mfa_code: z.optional(z.string().check(z.regex(/^[0-9]{6}$/, 'mfa_code is 6 digits'))),
});

const NO_STORE = { 'cache-control': 'no-store' };

export const routeHandlers: Record<string, RouteHandler> = {
  /** Signs a console user in; the session id goes only into an HttpOnly cookie. */
  'POST /console/session': httpHandler('platform', undefined, { body: signInBody }, async ({ body, event }) => {
    checkSignInRequest(event);
    const { id, session } = await signIn(body.email, body.password, body.mfa_code, signInAddress(event));
    // The session the browser had ends: its cookie is replaced, and a copy of it must not outlive
    // the sign-out of this one (until 2026-12-05 it stayed valid for its 8 hours). Ended once the
    // new one is open, so a sign-in that fails (a wrong password, no session stored) leaves the
    // browser signed in as it was. Failing to end it is logged, not the sign-in's failure: the
    // new cookie replaces the old one anyway, where a 500 kept the browser on the old session and
    // left the new one open with no cookie naming it (until 2026-12-05).
    try {
      await endSession(event);
    } catch (e) {
      logger.error('console sign-in: the session the browser had could not be ended; it lasts until it expires or a copy of its cookie signs out', {
        email: session.email,
        error: String(e),
      });
    }
    return { status: 200, body: sessionView(session), headers: { 'set-cookie': sessionCookie(id, session.expires_at - session.created), ...NO_STORE } };
  }),
  /** Who is signed in (and the CSRF token), or 401. */
  'GET /console/session': httpHandler('platform', undefined, {}, async ({ event }) => {
    const s = await sessionOf(event);
    if (!s) throw new AuthenticationError('Not signed in to the console.');
    return { status: 200, body: sessionView(s), headers: NO_STORE };
  }),
  /** Signs out (with the session's CSRF token) and clears the cookie. */
  'DELETE /console/session': httpHandler('platform', undefined, {}, async ({ event }) => {
    // Signing out needs no check of the user: the session ends either way.
    const s = await sessionOf(event, { check: false });
    if (s) {
      checkCsrf(event, s);
      await endSession(event);
    }
    return { status: 204, headers: { 'set-cookie': clearedCookie(), ...NO_STORE } };
  }),
};

export const handler = byRouteKey(NAME, routeHandlers);
