/**
 * packages/client/README.md's first snippet, run as written against what `npm start` gives a
 * newcomer: a fresh demo tenant (the small demo shop here), its credentials in place of the
 * snippet's `clientId`, `clientSecret` and `'svc_...'`, the stack's URL in place of localhost:3000.
 * Then the root README's snippet (section "With the TypeScript client") and the runnable tour
 * both READMEs point to (packages/client/examples/tour.ts), run as the README says, with the
 * credentials.json the stack wrote.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SIZES } from '../../shared/demo/generate.ts';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import * as client from '../../packages/client/src/index.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-readme-'));
let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ dataDir, port: 0, env: { CONSOLE_BUILD: 'off' }, demo: { size: DEMO_SIZES.small, log: () => {} } });
  await stack.demo;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The README's first ```ts block, its import taken out (the exports are passed in) and its placeholders filled. */
function readmeSnippet(base: string, apiKey: string): string {
  const readme = readFileSync('packages/client/README.md', 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('no ```ts block in packages/client/README.md');
  expect(block).toContain("from '@recsearch/client'");
  return block
    .split('\n')
    .filter((l) => !l.startsWith('import '))
    .join('\n')
    .replaceAll("'http://localhost:3000'", JSON.stringify(base))
    .replaceAll("'svc_...'", JSON.stringify(apiKey));
}

describe('packages/client/README.md', () => {
  it('its first snippet runs as written against a fresh demo tenant', async () => {
    const c = stack.credentials;
    const code = readmeSnippet(`http://127.0.0.1:${stack.port}`, c.api_key);
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
    const run = new AsyncFunction('ApiError', 'CoreClient', 'PlatformClient', 'clientId', 'clientSecret', 'console', code);
    const quiet = { log: () => {} };
    // Until 2026-12-06 it approved and promoted version 2, which a fresh demo tenant does not have (its one version is 1): 404.
    await expect(run(client.ApiError, client.CoreClient, client.PlatformClient, c.client_id, c.client_secret, quiet)).resolves.toBeUndefined();
  }, 60_000);

  it("the root README's section 'With the TypeScript client' runs as written (its credentials.json the stack's)", async () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### With the TypeScript client'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    if (!block) throw new Error('no ```ts block under "With the TypeScript client" in README.md');
    expect(block).toContain("readFileSync('.data/credentials.json', 'utf8')");
    const code = block
      .split('\n')
      .filter((l) => !l.startsWith('import '))
      .join('\n')
      .replaceAll("'.data/credentials.json'", JSON.stringify(stack.credentialsFile));
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
    const run = new AsyncFunction('readFileSync', 'ApiError', 'CoreClient', 'PlatformClient', 'console', code);
    const printed: string[] = [];
    await run(readFileSync, client.ApiError, client.CoreClient, client.PlatformClient, { log: (...a: unknown[]) => printed.push(a.join(' ')) });
    // Its last line: the typed 404 of a missing item.
    expect(printed.at(-1)).toMatch(/^404 item_not_found [0-9a-f-]{36}$/);
  }, 120_000);

  it('its tour (examples/tour.ts) runs as written: npx tsx packages/client/examples/tour.ts <credentials.json>', async () => {
    // After the snippet above (vitest runs a file's tests in order): the tour trains a new version
    // from template 1, approves and promotes it, and prints the run's end state and version.
    const { stdout } = await promisify(execFile)('npx', ['tsx', 'packages/client/examples/tour.ts', stack.credentialsFile], { timeout: 100_000 });
    expect(stdout).toMatch(/^404 not_found_error item_not_found [0-9a-f-]{36}$/m);
    expect(stdout).toMatch(/^Completed \d+$/m);
  }, 120_000);
});
