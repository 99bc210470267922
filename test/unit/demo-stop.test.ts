import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { dropLocalTransport, type LocalTransport, makeTable, useLocalTransport } from '../../shared/data/client.ts';
import { DEMO_SIZES } from '../../shared/demo/generate.ts';
import { planDemo } from '../../shared/demo/seed.ts';
import { startDemo } from '../../shared/demo/run.ts';

/** `p`'s outcome, or 'no answer' when it has none within `ms`. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'no answer'> => Promise.race([p, new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), ms))]);

const ENDPOINT = 'http://127.0.0.1:9';

describe("the demo seed's stop", () => {
  let dir: string | undefined;
  let transport: LocalTransport | undefined;
  const blobDir = process.env.BLOB_DIR;
  afterEach(() => {
    if (blobDir === undefined) delete process.env.BLOB_DIR;
    else process.env.BLOB_DIR = blobDir;
    if (transport) dropLocalTransport(ENDPOINT, transport);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('cuts its database calls in flight and sends none after: a seed held in a call stops, and writes nothing once its stop returned', async () => {
    // Found by a review (2026-12-07): the seed stopped only between its steps, its calls took no
    // signal, and one held in a call the stack's close stopped waiting for (30 s) went on after
    // the data folder's lock was released.
    dir = mkdtempSync(join(tmpdir(), 'recsearch-demo-stop-'));
    const file = join(dir, 'demo.json');
    planDemo(file, DEMO_SIZES.small);
    // A database that never answers, and honours a request's abort signal as the local port does.
    const sent: string[] = [];
    transport = {
      handle: (request: HttpRequest, options) =>
        new Promise<{ response: HttpResponse }>((_resolve, reject) => {
          sent.push(String(request.headers['x-amz-target']));
          const signal = options?.abortSignal;
          const abort = () => {
            const e = new Error('aborted');
            e.name = 'AbortError';
            reject(e);
          };
          if (signal instanceof AbortSignal) signal.addEventListener('abort', abort, { once: true });
        }),
    };
    useLocalTransport(ENDPOINT, transport);
    process.env.BLOB_DIR = join(dir, 'blobs');
    const lines: string[] = [];
    const run = startDemo({
      table: (signal) => makeTable('demo-stop', ENDPOINT, 'us-east-1', { signal }),
      queue: { send: async () => undefined, backlog: async () => 0 },
      tenant: 'demo',
      file,
      log: (l) => lines.push(l),
    });
    expect(run).toBeDefined();
    for (let waited = 0; sent.length === 0 && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(sent.length).toBeGreaterThan(0);
    // Until 2026-12-07 the stop waited for the held call for good.
    expect(await within(run?.stop() ?? Promise.resolve(), 3000)).toBeUndefined();
    expect(await run?.done).toBeUndefined();
    const atStop = sent.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(sent.length).toBe(atStop);
    expect(lines.join('\n')).not.toMatch(/seeding failed/);
  });
});
