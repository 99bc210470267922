/**
 * Loaded first (`--import`) in the training task's process, which locally is a child process of
 * the stack (shared/recs/launcher.ts `childProcessLauncher`) and on AWS a container with its own
 * task role: the whole process is that one function, so its DynamoDB calls (over HTTP to the
 * stack's dynalite) and its artifact calls are held to the role (shared/queue/workers.ts
 * `trainingTask`, local/grants.ts), unless LOCAL_IAM is off.
 */
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpHandlerOptions, HttpRequest } from '@smithy/types';
import { config, readLocalConfig } from '../shared/config.ts';
import { useLocalTransport, type LocalTransport } from '../shared/data/client.ts';
import { trainingTask } from '../shared/queue/workers.ts';
import { utf8 } from './dynamo-port.ts';
import { asProcess, deniedCall, enforceGrants } from './grants.ts';

const { iam } = readLocalConfig();
enforceGrants(iam);
asProcess(trainingTask.handler);
const endpoint = config().dynamodbEndpoint;
if (endpoint && iam) {
  const http = new NodeHttpHandler();
  const checked: LocalTransport = {
    handle(request: HttpRequest, options?: HttpHandlerOptions) {
      const target = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'x-amz-target')?.[1];
      const denied = deniedCall(target, utf8(request.body));
      if (denied) return Promise.resolve(denied);
      // The SDK hands its own request class, which NodeHttpHandler's signature names.
      return http.handle(request as Parameters<NodeHttpHandler['handle']>[0], options);
    },
    destroy: () => http.destroy(),
  };
  useLocalTransport(endpoint, checked);
}
