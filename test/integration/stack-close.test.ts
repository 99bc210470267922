import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startTestStack, type TestStack } from '../helpers/stack.ts';

// The item POST's handler, held on its way in until the test lets it go on (then it runs as it is).
const held = vi.hoisted(() => {
  let release: () => void = () => {};
  let entered: () => void = () => {};
  const inHandler = new Promise<void>((r) => (entered = r));
  const released = new Promise<void>((r) => (release = r));
  return { inHandler, released, enter: () => entered(), release: () => release() };
});
vi.mock('../../functions/core/items/create.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../functions/core/items/create.ts')>();
  return {
    handler: async (...args: Parameters<typeof real.handler>) => {
      held.enter();
      await held.released;
      return real.handler(...args);
    },
  };
});

let t: TestStack | undefined;
let closing: Promise<void> | undefined;
afterAll(async () => {
  held.release();
  await (closing ?? t?.stack.close())?.catch(() => undefined);
  if (t) rmSync(t.dataDir, { recursive: true, force: true });
});

describe('the local stack stopping', () => {
  it('lets a request in flight finish its write and send its queue messages (kept in the journal for the next start)', async () => {
    t = await startTestStack();
    const token = await t.demo.accessToken();
    const created = t.demo.core('POST', '/v1/items', { name: 'Held shoe' }, { token });
    await held.inHandler;
    closing = t.stack.close();
    // Once the server takes no new connections, its close has begun: what the stack stops before it is stopped.
    await vi.waitFor(
      async () => {
        const refused = await fetch(`${t?.base}/v1/items`).then(
          () => false,
          () => true,
        );
        expect(refused).toBe(true);
      },
      { timeout: 10_000, interval: 20 },
    );
    held.release();
    const r = await created;
    expect(r.status).toBe(201);
    await closing;
    // Sent: its journal line ("s", id, time, body) is there, whether or not it was delivered before the queue stopped.
    const sent = readFileSync(join(t.dataDir, 'queue-embedding.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('["s"'))
      .map((l) => JSON.parse(JSON.parse(l)[3] as string) as { item_id: number });
    expect(sent.map((m) => String(m.item_id))).toContain(String(r.body.id));
  });
});
