import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { slowDown, TokenBucket } from '../auth/rate-limit.ts';
import { config } from '../config.ts';
import { consoleUserStore } from '../data/index.ts';
import { AuthenticationError } from '../errors.ts';
import { cognitoIdentity } from './cognito.ts';
import { tableIdentity } from './identity.ts';
import { openSession } from './session.ts';
import type { ConsoleIdentity } from './types.ts';
import { nowSeconds } from '../clock.ts';

/*
 * Signing in (POST /console/session only: the other routes check sessions and never load the
 * Cognito client).
 */

/** Cache of one: the container's identity provider (Cognito, or the local users). */
let identity: ConsoleIdentity | undefined;
/** Cognito when deployed (USER_POOL_ID and CONSOLE_CLIENT_ID set), the table's console users locally. */
export function consoleIdentity(): ConsoleIdentity {
  if (!identity) {
    const { auth, region } = config();
    const clientId = config().console.cognitoClientId;
    identity = auth.userPoolId && clientId ? cognitoIdentity(new CognitoIdentityProviderClient({ region }), auth.userPoolId, clientId) : tableIdentity(consoleUserStore());
  }
  return identity;
}

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
  const user = await consoleIdentity().verify(who, password, mfaCode);
  if (!user) throw new AuthenticationError('Wrong email or password.');
  failuresByAddress.refund(sourceIp);
  failuresByEmail.refund(who);
  return openSession(user, now);
}
