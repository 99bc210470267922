import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { config } from '../config.ts';
import { localProvisioner, type ClientProvisioner } from '../domain/credentials.ts';
import { cognitoProvisioner } from './cognito-provisioner.ts';

/** Cache of one: the container's client provisioner (Cognito, or the local one), chosen on first use or by `useProvisioner`. */
let chosen: ClientProvisioner | undefined;

/** Cognito app clients when deployed (USER_POOL_ID set), generated credentials locally. */
export function provisioner(): ClientProvisioner {
  if (!chosen) {
    const { auth, region } = config();
    chosen = auth.userPoolId ? cognitoProvisioner(new CognitoIdentityProviderClient({ region }), auth.userPoolId) : localProvisioner;
  }
  return chosen;
}
