import { describe, expect, it } from 'vitest';
import { SharedCalls } from '../../shared/concurrency.ts';

describe('calls in flight by key (SharedCalls)', () => {
  it('a call for a key whose call runs shares it; once settled, the next starts anew; other keys run apart', async () => {
    const calls = new SharedCalls<string, number>();
    let started = 0;
    const slow = (n: number) => () => {
      started++;
      return new Promise<number>((r) => setTimeout(() => r(n), 10));
    };
    const [a, b, c] = await Promise.all([calls.run('k', slow(1)), calls.run('k', slow(2)), calls.run('other', slow(3))]);
    expect([a, b, c, started]).toEqual([1, 1, 3, 2]);
    expect(await calls.run('k', slow(4))).toBe(4);
    expect(started).toBe(3);
  });

  it("a failure is every sharer's, then forgotten; a failed call nobody else awaits raises no unhandled rejection", async () => {
    const calls = new SharedCalls<string, number>();
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const fail = () => Promise.reject(new Error('down'));
      const first = calls.run('k', fail);
      const second = calls.run('k', () => Promise.resolve(1));
      await expect(first).rejects.toThrow('down');
      await expect(second).rejects.toThrow('down');
      expect(await calls.run('k', () => Promise.resolve(2))).toBe(2);
      // The caller handles the failure on its own chain: nothing else may fail unawaited.
      await calls.run('j', fail).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
