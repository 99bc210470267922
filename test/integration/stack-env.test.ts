import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../local/stack.ts';

/** The settings a stack's start writes into process.env, and one given through its `env`. */
const KEYS = ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'AUTH_JWKS_FILE', 'AUTH_SIGNING_KEY_FILE', 'BLOB_DIR', 'AUTH_ISSUER', 'USER_REF_KEY', 'RECSEARCH_TEST_STACK_ENV'] as const;
const envOf = () => Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));

describe("a local stack's settings in process.env", () => {
  it('leave it once the stack closed, as they were before it started (until 2026-12-07 only the test stacks put them back)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-stack-env-'));
    const before = envOf();
    try {
      const stack = await startLocalStack({ dataDir, port: 0, env: { RECSEARCH_TEST_STACK_ENV: 'set', CONSOLE_BUILD: 'off' } });
      expect(process.env.RECSEARCH_TEST_STACK_ENV).toBe('set');
      expect(process.env.AUTH_ISSUER).toBe(`http://localhost:${stack.port}`);
      await stack.close();
      expect(envOf()).toEqual(before);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("USER_REF_KEY: the environment's own is kept; unset, one derived from the data folder's signing key, the same at each start", async () => {
    // Found by a review (2026-12-08): the derived key replaced the one the environment set
    // (docs/configuration.md lists USER_REF_KEY among the settings `npm start` reads).
    const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-stack-env-'));
    const before = process.env.USER_REF_KEY;
    const keyOf = async () => {
      const stack = await startLocalStack({ dataDir, port: 0, env: { CONSOLE_BUILD: 'off' } });
      const key = process.env.USER_REF_KEY;
      await stack.close();
      return key;
    };
    try {
      process.env.USER_REF_KEY = 'the-operators-key';
      expect(await keyOf()).toBe('the-operators-key');
      delete process.env.USER_REF_KEY;
      const derived = await keyOf();
      expect(derived).toMatch(/^[0-9a-f]{64}$/);
      expect(await keyOf()).toBe(derived);
    } finally {
      if (before === undefined) delete process.env.USER_REF_KEY;
      else process.env.USER_REF_KEY = before;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('leave it when the start failed after writing them (a damaged credentials.json)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-stack-env-'));
    writeFileSync(join(dataDir, 'credentials.json'), 'not json');
    const before = envOf();
    try {
      await expect(startLocalStack({ dataDir, port: 0, env: { RECSEARCH_TEST_STACK_ENV: 'set', CONSOLE_BUILD: 'off' } })).rejects.toThrow(/credentials.json is damaged/);
      expect(envOf()).toEqual(before);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
