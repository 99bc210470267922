import { describe, expect, it, vi } from 'vitest';
import { startHttpServer } from '../../local/server.ts';

// The item GET's handler, held until the test lets it answer.
const held = vi.hoisted(() => {
  let release: () => void = () => {};
  let entered: () => void = () => {};
  const inHandler = new Promise<void>((r) => (entered = r));
  const released = new Promise<void>((r) => (release = r));
  return { inHandler, released, enter: () => entered(), release: () => release(), answered: false };
});
vi.mock('../../functions/core/items/get.ts', () => ({
  handler: async () => {
    held.enter();
    await held.released;
    held.answered = true;
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
  },
}));

describe('the local server stopping', () => {
  it('waits for a request whose client went away to be answered: its handler may be half way through writes', async () => {
    const s = await startHttpServer({ host: '127.0.0.1', port: 0, jwksFile: '/dev/null' });
    const gone = new AbortController();
    const sent = fetch(`http://127.0.0.1:${s.port}/v1/items/1`, { signal: gone.signal }).catch((e: Error) => e.name);
    await held.inHandler;
    gone.abort();
    expect(await sent).toBe('AbortError');
    let closed = false;
    const closing = s.close().then(() => (closed = true));
    // The client's connection is gone; the handler has not answered, so the server has not closed.
    await new Promise((r) => setTimeout(r, 200));
    expect(closed).toBe(false);
    held.release();
    await closing;
    expect(held.answered).toBe(true);
  });
});
