/**
 * Runs the data-layer tests (test/data) against AWS's own DynamoDB Local 1.25.1, the jar inside
 * the npm package amplify-dynamodb-simulator, on the machine's Java. `npm pack` fetches only
 * that tarball (not its dependencies) into .cache/ once.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
const cache = resolve('.cache', 'dynamodb-local');
const emulator = join(cache, 'package', 'emulator');
const jar = join(emulator, 'DynamoDBLocal.jar');

if (!existsSync(jar)) {
  mkdirSync(cache, { recursive: true });
  console.log(`Fetching DynamoDB Local (${PACKAGE}) into ${cache}`);
  const out = execFileSync('npm', ['pack', PACKAGE, '--pack-destination', cache, '--silent'], { encoding: 'utf8' }).trim().split('\n').pop() as string;
  execFileSync('tar', ['xzf', join(cache, out), '-C', cache, 'package/emulator']);
}

const port = await new Promise<number>((res) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => res(p));
  });
});

const java = spawn('java', [`-Djava.library.path=${join(emulator, 'DynamoDBLocal_lib')}`, '-jar', jar, '-inMemory', '-port', String(port)], {
  cwd: emulator,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let log = '';
java.stdout.on('data', (d: Buffer) => (log += d.toString()));
java.stderr.on('data', (d: Buffer) => (log += d.toString()));
java.on('exit', (code) => {
  if (code !== null && code !== 0) console.error(`DynamoDB Local exited ${code}:\n${log}`);
});

const endpoint = `http://127.0.0.1:${port}`;
let up = false;
for (let i = 0; i < 200 && !up; i++) {
  try {
    const r = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        'content-type': 'application/x-amz-json-1.0',
        authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x',
      },
      body: '{}',
    });
    up = r.ok;
  } catch {
    await new Promise((r) => setTimeout(r, 100));
  }
}
if (!up) {
  java.kill();
  console.error(`DynamoDB Local did not come up on ${endpoint}:\n${log}`);
  process.exit(1);
}
console.log(`DynamoDB Local ${/Version:\s*(\S+)/.exec(log)?.[1] ?? ''} on ${endpoint}: running test/data against it`);

// Extra arguments (reporters) pass through to vitest.
const vitest = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'test/data', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, DDB_ENDPOINT: endpoint, DDB_LABEL: 'dynamodb-local' },
});
const code = await new Promise<number>((res) => vitest.on('exit', (c) => res(c ?? 1)));
java.kill();
process.exit(code);
