import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { threadedHandler } from '../../local/threaded-handler.ts';

const dir = mkdtempSync(join(tmpdir(), 'recsearch-worker-timeout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const modulePath = fileURLToPath(new URL('../helpers/slow-worker.ts', import.meta.url));
const event = (body: string): SQSEvent => ({ Records: [{ body } as SQSEvent['Records'][number]] });

describe("a local worker thread with its function's time limit", () => {
  it('ends an invocation still running at the limit, as Lambda does (it does not go on), and a new thread takes the next', async () => {
    // Until 2026-12-07 a local training run had no time limit: it went on past WORKER_RUN_LOST_SECONDS,
    // and the maintenance pass, taking its invocation for over, ended the run while it ran.
    const worker = await threadedHandler('workers/train', { timeoutSeconds: 0.5, modulePath });
    try {
      expect(await worker.handler(event('quick'), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
      const file = join(dir, 'late');
      await expect(worker.handler(event(`late 1500 ${file}`), {} as never)).rejects.toThrow(/timed out after 0.5 seconds/);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(existsSync(file)).toBe(false);
      // A new thread: its own module state, as a new Lambda container.
      expect(await worker.handler(event('quick'), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
      // Within the limit an invocation answers as before.
      const within = join(dir, 'within');
      expect(await worker.handler(event(`late 100 ${within}`), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 2' }] });
      expect(existsSync(within)).toBe(true);
    } finally {
      await worker.close();
    }
  });
});
