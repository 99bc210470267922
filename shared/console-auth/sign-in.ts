import { slowDown, TokenBucket } from '../auth/rate-limit.ts';
import { config } from '../config.ts';
import { AuthenticationError } from '../errors.ts';
import { MfaRequired } from './identity.ts';
import type { ConsoleIdentity } from './types.ts';
import { openSession } from './session.ts';
import { consoleIdentity } from './users.ts';
import { nowSeconds } from '../clock.ts';

/*
 * Signing in (POST /console/session only). The other routes read a session's user again now and
 * then (recheck.ts), through the same identity provider (users.ts).
 */

/** Caches of one each: the failed sign-in buckets by address and by email (their keys bounded in TokenBucket). */
let failuresByAddress: TokenBucket | undefined;
let failuresByEmail: TokenBucket | undefined;

const TOO_MANY = 'Too many failed sign-ins; wait a minute and try again.';

/**
 * Checks email and password with the identity port and opens a session. Like the token endpoint,
 * every attempt holds one failure of its address and of its email until it verifies, so guesses
 * (concurrent or not) run into 429 quickly; a successful sign-in gives them back.
 */
export async function signIn(email: string, password: string, mfaCode: string | undefined, sourceIp: string, now = nowSeconds()) {
  const s = config().console;
  failuresByAddress ??= new TokenBucket(s.refillPerSecond * 10, s.failuresPerAddress);
  failuresByEmail ??= new TokenBucket(s.refillPerSecond, s.failuresPerEmail);
  const who = email.toLowerCase();
  if (!failuresByAddress.take(sourceIp)) throw slowDown(TOO_MANY, failuresByAddress, sourceIp);
  // While an email's failures are used up its password is not checked at all, the right one
  // included (as Cognito's own lockout does): guessing gets nothing from them, at the price that
  // someone who knows the email can keep it refused by failing once per refill.
  if (!failuresByEmail.take(who)) {
    failuresByAddress.refund(sourceIp);
    throw slowDown(TOO_MANY, failuresByEmail, who);
  }
  const giveBack = () => {
    failuresByAddress?.refund(sourceIp);
    failuresByEmail?.refund(who);
  };
  let user: Awaited<ReturnType<ConsoleIdentity['verify']>>;
  try {
    user = await (await consoleIdentity()).verify(who, password, mfaCode);
  } catch (e) {
    // Only an answer about the credentials holds a failure: a wrong password (below), a wrong
    // one-time code or an account to set up first (AuthenticationError). The password was right
    // (Cognito asked for the code: MfaRequired, an AuthenticationError too), or the provider could
    // not answer (throttled, InternalErrorException, unreachable, timed out, an answer not
    // understood, misconfigured): no failure is held. Until 2026-12-05 each MFA sign-in's first
    // step kept one of the email's five, and so did every failure but a 5xx ApiError, so a
    // Cognito outage locked users out after five tries.
    if (e instanceof MfaRequired || !(e instanceof AuthenticationError)) giveBack();
    throw e;
  }
  if (!user) throw new AuthenticationError('Wrong email or password.');
  giveBack();
  return openSession(user, now);
}
