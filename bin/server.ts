/** `npm start`: the whole service on one port, with the demo tenant. */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { startLocalStack } from '../shared/local/stack.ts';

const dataDir = process.env.DATA_DIR || '.data';
const port = Number(process.env.PORT || 3000);

const stack = await startLocalStack({ dataDir, port, host: process.env.HOST || '127.0.0.1' });
const c = stack.credentials;
console.log(`Service listening on http://localhost:${stack.port}
  Core API      ${c.base_url}/v1
  Platform API  ${c.console_url}/api
  Token         ${c.auth_url}/oauth2/token
Demo tenant "${c.tenant}" credentials: ${stack.credentialsFile}`);

const stop = async () => {
  await stack.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
