import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.ts';

export interface TableRef {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

/** Builds a document client; an explicit endpoint (local stand-in) gets dummy credentials. */
export function makeTable(tableName: string, endpoint: string | undefined, region: string): TableRef {
  const client = new DynamoDBClient({
    region,
    ...(endpoint
      ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 5 }
      : {}),
  });
  // The SDK's logger middleware walks every input and output to redact it for a logger this
  // service never gives it (a no-op logger still gets the walk): a Query of 200 events paid for it.
  client.middlewareStack.remove('loggerMiddleware');
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { doc, tableName };
}

let shared: TableRef | undefined;

/** The container's table, created once at first use (module scope per Lambda container). */
export function table(): TableRef {
  if (!shared) {
    const c = config();
    shared = makeTable(c.tableName, c.dynamodbEndpoint, c.region);
  }
  return shared;
}
