import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { startDynaliteThread } from '../../local/dynamo.ts';

/** `p`'s outcome, or 'no answer' when it has none within `ms`. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'no answer'> => Promise.race([p, new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), ms))]);

describe('the local stack never waits for good on a thread that does not answer', () => {
  it('ends the dynalite thread when its server does not close within the time limit (a request still arriving on a connection), and says so', async () => {
    const db = await startDynaliteThread({ closeTimeoutMs: 300 });
    // A request whose body never comes: dynalite's server.close waits for its connection.
    const url = new URL(db.endpoint);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 100\r\n\r\n{');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // Until 2026-12-07 the close waited for the thread's `closed` for good.
      expect(await within(db.close(), 5000)).toBeUndefined();
      expect(errors.mock.calls.flat().join('\n')).toMatch(/did not close within 300 ms.*it was ended/);
    } finally {
      errors.mockRestore();
      socket.destroy();
    }
  });
});
