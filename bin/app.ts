/** The CDK app: `npx cdk deploy` (CLI aws-cdk@2.1148.1), `npm run synth` offline. */
import { App } from 'aws-cdk-lib';
import { ServiceStack } from '../lib/stack.ts';
import { applyNag } from '../lib/nag.ts';

const app = new App();
const domainPrefix = app.node.tryGetContext('authDomainPrefix') as string | undefined;
const stack = new ServiceStack(app, (app.node.tryGetContext('stackName') as string | undefined) ?? 'RecSearch', {
  ...(domainPrefix ? { authDomainPrefix: domainPrefix } : {}),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
applyNag(app, stack);
