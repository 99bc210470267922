/**
 * `npm start`: the whole service on one port, with the demo tenant (seeded with the demo shop on
 * a fresh data directory unless DEMO=0). Settings: shared/config.ts (readServerConfig).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { readServerConfig, type ServerConfig } from '../shared/config.ts';
import { DEMO_SIZES } from '../shared/demo/generate.ts';
import { accessLine, batchedLines, messageLine } from '../local/access-log.ts';
import { StartupError } from '../local/lock.ts';
import { startLocalStack, type LocalStack } from '../local/stack.ts';

/** A start-up failure in one line (no stack trace for the ones we can explain), then exit 1. */
function fail(e: unknown, format: ServerConfig['logFormat'] = 'text'): never {
  const explained = e instanceof StartupError || (e instanceof Error && e.message.startsWith('Environment variable '));
  console.error(messageLine(`recsearch: ${explained ? (e as Error).message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`, format, 'error'));
  process.exit(1);
}

let cfg: ServerConfig;
try {
  cfg = readServerConfig();
} catch (e) {
  fail(e);
}
// The access log's lines are written a batch per turn of the event loop; other lines at once,
// after whatever access lines are pending.
const accessLines = batchedLines((text) => process.stdout.write(text));
process.on('exit', accessLines.flush);
const say = (line: string) => {
  accessLines.flush();
  console.log(messageLine(line, cfg.logFormat));
};

let stack: LocalStack | undefined;
// Declared before the start: the database thread may stop while the stack starts (onFatal).
let stopping = false;
async function stop(code = 0): Promise<void> {
  // A second Ctrl-C does not wait.
  if (stopping) process.exit(1);
  stopping = true;
  await stack?.close().catch((e: unknown) => console.error(messageLine(`recsearch: stopping: ${String(e)}`, cfg.logFormat, 'error')));
  process.exit(code);
}

try {
  stack = await startLocalStack({
    dataDir: cfg.dataDir,
    port: cfg.port,
    host: cfg.host,
    accessLog: (e) => accessLines.line(accessLine(e, cfg.logFormat)),
    // The database thread stopped (a full disk): say why and end, so that a supervisor (or the
    // person watching) starts it again, instead of answering 500 to everything from then on.
    onFatal: (message) => {
      console.error(messageLine(`recsearch: ${message}`, cfg.logFormat, 'error'));
      void stop(1);
    },
    ...(cfg.demo ? { demo: { size: DEMO_SIZES.full, log: say } } : {}),
  });
} catch (e) {
  fail(e, cfg.logFormat);
}
const c = stack.credentials;
for (const line of [
  `Service listening on http://localhost:${stack.port}`,
  `  Core API      ${c.base_url}/v1`,
  `  Platform API  ${c.console_url}/api`,
  `  Token         ${c.auth_url}/oauth2/token`,
  ...(c.console_email ? [`  Console       ${c.console_url}/console/ (sign in with console_email and console_password of the file below)`] : []),
  `Demo tenant "${c.tenant}" credentials: ${stack.credentialsFile}`,
]) {
  say(line);
}

process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
