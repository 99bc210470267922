/**
 * Loaded (`--import`) after local/task-grants.ts in a training task's process by a test: every
 * UpdateItem that would set a run InProgress (its start) answers ProvisionedThroughputExceeded,
 * as DynamoDB answers a throttled write, so the task meets a busy service before its run starts.
 */
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpHandlerOptions, HttpRequest } from '@smithy/types';
import { config } from '../../shared/config.ts';
import { useLocalTransport, type LocalTransport } from '../../shared/data/client.ts';
import { utf8 } from '../../local/dynamo-port.ts';

const endpoint = config().dynamodbEndpoint;
if (endpoint) {
  const http = new NodeHttpHandler();
  const throttling: LocalTransport = {
    handle(request: HttpRequest, options?: HttpHandlerOptions) {
      const target = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'x-amz-target')?.[1] ?? '';
      const body = utf8(request.body);
      if (target.endsWith('.UpdateItem') && body.includes('"InProgress"')) {
        const answer = JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'throttled (test)' });
        return Promise.resolve({ response: { statusCode: 400, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from(answer) } });
      }
      return http.handle(request as Parameters<NodeHttpHandler['handle']>[0], options);
    },
    destroy: () => http.destroy(),
  };
  useLocalTransport(endpoint, throttling);
}
