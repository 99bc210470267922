import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEMO_SIZES } from '../../shared/demo/generate.ts';
import { startLocalStack } from '../../local/stack.ts';
import { holdStackEnv } from '../helpers/stack.ts';

// A demo seed held forever (in a call that never ends): it neither finishes nor stops.
vi.mock('../../shared/demo/run.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../shared/demo/run.ts')>();
  return {
    ...real,
    startDemo: () => ({ done: new Promise<never>(() => undefined), stop: () => new Promise<never>(() => undefined) }),
  };
});

describe('a local stack whose demo seed does not stop', () => {
  it('closes after the time limit, says so, and frees its data folder for the next start (until 2026-12-07 its close waited for good)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'recsearch-demo-stop-'));
    const release = holdStackEnv();
    const lines: string[] = [];
    try {
      const stack = await startLocalStack({ dataDir, port: 0, demo: { size: DEMO_SIZES.small, log: (l) => lines.push(l), stopTimeoutMs: 300 } });
      expect(stack.demo).toBeDefined();
      const closed = await Promise.race([stack.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('no answer'), 15_000))]);
      expect(closed).toBe('closed');
      expect(lines).toContain('demo: the seed did not stop within 300 ms (held in a call?); the server closes without waiting for it (the next start resumes it)');
      // The folder's lock is released: it starts again.
      const again = await startLocalStack({ dataDir, port: 0 });
      await again.close();
    } finally {
      release();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
