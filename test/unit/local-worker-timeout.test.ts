import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { threadedHandler } from '../../local/threaded-handler.ts';
import { workers } from '../../shared/queue/workers.ts';
import { startTestStack } from '../helpers/stack.ts';

// The real threads, their options recorded: what the local stack asks of each worker's thread.
vi.mock('../../local/threaded-handler.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../local/threaded-handler.ts')>();
  return { ...real, threadedHandler: vi.fn(real.threadedHandler) };
});

// Every worker thread started, with whether it has ended (its own 'exit' listener, registered before the
// handler's own): what a test waits for instead of sleeping for a thread to start and end.
const threads = vi.hoisted(() => [] as { worker: Worker; exited: boolean }[]);
vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  class RecordedWorker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      super(...args);
      const entry = { worker: this as Worker, exited: false };
      threads.push(entry);
      this.once('exit', () => {
        entry.exited = true;
      });
    }
  }
  return { ...real, Worker: RecordedWorker };
});

const dir = mkdtempSync(join(tmpdir(), 'recsearch-worker-timeout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const modulePath = fileURLToPath(new URL('../helpers/slow-worker.ts', import.meta.url));
const event = (body: string): SQSEvent => ({ Records: [{ body } as SQSEvent['Records'][number]] });

describe("a local worker thread with its function's time limit", () => {
  it('ends an invocation still running at the limit, as Lambda does (it does not go on), and a new thread takes the next', async () => {
    // Until 2026-12-07 a local training run had no time limit: it went on past WORKER_RUN_LOST_SECONDS,
    // and the maintenance pass, taking its invocation for over, ended the run while it ran.
    // A 1.5 s limit: the invocations within it (answered at once, or after 100 ms) have 1.4 s of
    // margin on a loaded machine (they had 0.4 s under a 0.5 s limit); the one past it would write
    // its file 1.5 s after the limit, and is looked for 2.5 s after.
    const worker = await threadedHandler('workers/train', { timeoutSeconds: 1.5, modulePath });
    try {
      expect(await worker.handler(event('quick'), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
      const file = join(dir, 'late');
      await expect(worker.handler(event(`late 3000 ${file}`), {} as never)).rejects.toThrow(/timed out after 1.5 seconds/);
      await new Promise((resolve) => setTimeout(resolve, 2500));
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

  it('replaces a thread that ended on its own (an error nothing caught), with or without a limit: later invocations are answered', async () => {
    // Until 2026-12-07 they were posted to the ended thread and never answered: the embedding
    // worker's deliveries hung for good, the training worker's until its time limit.
    for (const opts of [{ modulePath }, { modulePath, timeoutSeconds: 30 }]) {
      const worker = await threadedHandler('workers/embed', opts);
      try {
        expect(await worker.handler(event('quick'), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
        await expect(worker.handler(event('exit'), {} as never)).rejects.toThrow(/handler thread ended/);
        const next = Promise.race([worker.handler(event('quick'), {} as never), new Promise((resolve) => setTimeout(() => resolve('no answer'), 5000))]);
        expect(await next).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
      } finally {
        await worker.close();
      }
    }
  }, 30_000);

  it('a replacement thread that cannot start fails the calls that find it, leaves no rejection unhandled, and the handler recovers and closes', async () => {
    // Until 2026-12-07 a start made after a failed one had no handler: when it failed too before the
    // next call came, its rejection went unhandled (which ends `npm start`'s process), and close()
    // threw the failure instead of closing.
    const flaky = fileURLToPath(new URL('../helpers/flaky-start-worker.ts', import.meta.url));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const worker = await threadedHandler('workers/embed', { modulePath: flaky });
    try {
      expect(await worker.handler(event('quick'), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
      process.env.RECSEARCH_TEST_FAIL_START = '1';
      await expect(worker.handler(event('exit'), {} as never)).rejects.toThrow(/handler thread ended/);
      const started = threads.length;
      await expect(worker.handler(event('quick'), {} as never)).rejects.toThrow(/ended before it was ready/);
      // The start made then fails with no call waiting for it: its thread seen ended (was a 2 s
      // sleep, which a loaded machine's thread start could outlast, the test then passing before
      // the failure came), then a turn of the event loop for an unhandled rejection to be reported.
      await vi.waitFor(
        () => {
          expect(threads.length).toBe(started + 1);
          expect(threads[started]?.exited).toBe(true);
        },
        { timeout: 20_000, interval: 20 },
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      delete process.env.RECSEARCH_TEST_FAIL_START;
      await expect(worker.handler(event('quick'), {} as never)).rejects.toThrow(/ended before it was ready/);
      expect(await worker.handler(event('quick'), {} as never)).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
      // Closed while its replacement cannot start: closes without throwing.
      process.env.RECSEARCH_TEST_FAIL_START = '1';
      await expect(worker.handler(event('exit'), {} as never)).rejects.toThrow(/handler thread ended/);
      // Its replacement (started as the thread ended) has failed: its thread seen ended, not a 1 s sleep.
      const replacement = threads.length - 1;
      await vi.waitFor(() => expect(threads[replacement]?.exited).toBe(true), { timeout: 20_000, interval: 20 });
      await expect(worker.close()).resolves.toBeUndefined();
    } finally {
      delete process.env.RECSEARCH_TEST_FAIL_START;
      process.off('unhandledRejection', onUnhandled);
      await worker.close().catch(() => undefined);
    }
  }, 30_000);

  it('replaces a replacement that ended on its own before any call took it up: the next call is answered', async () => {
    // Until 2026-12-07 the replacement's own end was left alone (it was not yet the current
    // thread), and the next call was posted to it and never answered.
    const flaky = fileURLToPath(new URL('../helpers/flaky-start-worker.ts', import.meta.url));
    const worker = await threadedHandler('workers/embed', { modulePath: flaky });
    try {
      process.env.RECSEARCH_TEST_EXIT_AFTER_MS = '200';
      const before = threads.length;
      await expect(worker.handler(event('exit'), {} as never)).rejects.toThrow(/handler thread ended/);
      // The replacement (started when the first thread ended) has started and ended on its own, not
      // assumed after a 2.5 s sleep: under load its start could outlast the sleep, and the call
      // below then took it up before it ended (answered by it, not by a replacement of it).
      await vi.waitFor(
        () => {
          expect(threads.length).toBe(before + 1);
          expect(threads[before]?.exited).toBe(true);
        },
        { timeout: 20_000, interval: 20 },
      );
      delete process.env.RECSEARCH_TEST_EXIT_AFTER_MS;
      const next = Promise.race([worker.handler(event('quick'), {} as never), new Promise((resolve) => setTimeout(() => resolve('no answer'), 5000))]);
      expect(await next).toEqual({ batchItemFailures: [{ itemIdentifier: 'seen 1' }] });
    } finally {
      delete process.env.RECSEARCH_TEST_EXIT_AFTER_MS;
      await worker.close();
    }
  }, 30_000);

  it("is what the local stack gives the training worker (its Lambda's 900 s), and only it", async () => {
    // The stack's wiring (local/stack.ts), untested until now: without it the thread above is never given a limit.
    const t = await startTestStack();
    try {
      // The stack's own (the test above runs a module of its own, `modulePath`).
      const calls = vi.mocked(threadedHandler).mock.calls.filter(([, opts]) => opts?.modulePath === undefined);
      const train = workers.find((w) => w.handler === 'workers/train');
      expect(train?.timeoutSeconds).toBe(900);
      expect(calls.filter(([module]) => module === 'workers/train').map(([, opts]) => opts)).toEqual([{ timeoutSeconds: 900 }]);
      // The embedding worker's batches share their thread (four at once): a limit would end them all.
      const embed = calls.filter(([module]) => module === 'workers/embed');
      expect(embed.length).toBe(1);
      expect(embed[0]?.[1]?.timeoutSeconds).toBeUndefined();
    } finally {
      await t.stop();
    }
  }, 60_000);
});
