import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { cognitoProvisioner } from '../auth/cognito-provisioner.ts';
import { closeTable, makeTable } from '../data/client.ts';
import { dynamoCredentialStore } from '../data/credentials.ts';
import { AdminError, type AdminConnection } from './commands.ts';

/** The outputs of the deployed stack the admin CLI needs (lib/stack.ts declares them). */
export interface StackOutputs {
  baseUrl: string;
  consoleUrl: string;
  authUrl: string;
  userPoolId: string;
  tableName: string;
}

export async function readStackOutputs(cfn: CloudFormationClient, stackName: string): Promise<StackOutputs> {
  const out = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = new Map((out.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const get = (k: string) => {
    const v = outputs.get(k);
    if (!v) throw new AdminError(`Stack ${stackName} has no output ${k}: is it deployed from this project?`);
    return v;
  };
  return { baseUrl: get('BaseUrl'), consoleUrl: get('ConsoleUrl'), authUrl: get('AuthUrl'), userPoolId: get('UserPoolId'), tableName: get('TableName') };
}

/**
 * A deployed stack, found by name: tenant records go to its table; OAuth clients become
 * Cognito app clients (client-credentials flow) in its user pool. Uses the caller's AWS credentials.
 */
export async function connectDeployed(stackName: string, region: string, clients: { cfn?: CloudFormationClient; cognito?: CognitoIdentityProviderClient } = {}): Promise<AdminConnection> {
  const cfn = clients.cfn ?? new CloudFormationClient({ region });
  const o = await readStackOutputs(cfn, stackName);
  const table = makeTable(o.tableName, undefined, region);
  const cognito = clients.cognito ?? new CognitoIdentityProviderClient({ region });
  return {
    store: dynamoCredentialStore(table),
    urls: { base_url: o.baseUrl.replace(/\/$/, ''), console_url: o.consoleUrl.replace(/\/$/, ''), auth_url: o.authUrl.replace(/\/$/, '') },
    provisioner: cognitoProvisioner(cognito, o.userPoolId),
    close: async () => {
      closeTable(table);
    },
  };
}
