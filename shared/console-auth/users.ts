import { config } from '../config.ts';
import { consoleUserStore } from '../data/index.ts';
import { cognitoClient, cognitoIdentity } from './cognito.ts';
import { tableIdentity } from './identity.ts';
import type { ConsoleIdentity } from './types.ts';

/** Cache of one: the container's identity provider (Cognito, or the local users). */
let identity: Promise<ConsoleIdentity> | undefined;

/**
 * Where console users are read, at sign-in and at a session's check: Cognito when deployed
 * (USER_POOL_ID set: every API function has it; only the sign-in function has CONSOLE_CLIENT_ID,
 * which checking a password needs), the table's console users locally.
 */
export function consoleIdentity(): Promise<ConsoleIdentity> {
  identity ??= load().catch((e: unknown) => {
    identity = undefined;
    throw e;
  });
  return identity;
}

async function load(): Promise<ConsoleIdentity> {
  const { auth, region } = config();
  if (!auth.userPoolId) return tableIdentity(consoleUserStore());
  return cognitoIdentity(cognitoClient(region), auth.userPoolId, config().console.cognitoClientId);
}
