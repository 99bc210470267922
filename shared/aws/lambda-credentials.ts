import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias in
 * lib/service-function.ts). Lambda hands every function its role's credentials in
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, the first link of the SDK's
 * default chain, so the rest of the chain (SSO, INI files, web identity, IMDS and the STS/SSO
 * clients they carry, about 130 KB minified) can never be reached there. Local runs, tests and
 * the admin CLI are not bundled and keep the full default chain.
 */
export const defaultProvider = (init: FromEnvInit = {}) => fromEnv(init);
