import { describe, expect, it } from 'vitest';
import { FreshRead, freshReads } from '../../shared/fresh-read.ts';

/** A read whose result is the "version" of the data when it started, and which ends when told. */
function controlledSource() {
  let version = 0;
  let started = 0;
  const finishers: (() => void)[] = [];
  return {
    bump: () => ++version,
    get started() {
      return started;
    },
    read: () =>
      new Promise<number>((resolve) => {
        started += 1;
        const seen = version;
        finishers.push(() => resolve(seen));
      }),
    finishNext: async () => {
      finishers.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

describe('FreshRead', () => {
  it('lets many concurrent callers share two reads', async () => {
    const src = controlledSource();
    const r = new FreshRead(src.read);
    const first = r.get();
    const rest = Array.from({ length: 9 }, () => r.get());
    expect(src.started).toBe(1);
    await src.finishNext();
    expect(src.started).toBe(2);
    await src.finishNext();
    await Promise.all([first, ...rest]);
    expect(src.started).toBe(2);
    expect(r.idle).toBe(true);
  });

  it('never answers a caller with a read that began before it called', async () => {
    const src = controlledSource();
    const r = new FreshRead(src.read);
    const early = r.get(); // starts a read of version 0
    src.bump(); // a write is acknowledged (version 1) ...
    const late = r.get(); // ... before this call: it must see version 1
    await src.finishNext();
    await src.finishNext();
    expect(await early).toBe(0);
    expect(await late).toBe(1);
  });

  it('passes a failure to its callers only, and reads again afterwards', async () => {
    let calls = 0;
    const r = new FreshRead(async () => {
      calls += 1;
      if (calls === 1) throw new Error('boom');
      return calls;
    });
    await expect(r.get()).rejects.toThrow('boom');
    await expect(r.get()).resolves.toBe(2);
  });

  it('keeps keys apart and forgets idle ones', async () => {
    const seen: string[] = [];
    const get = freshReads(async (k) => {
      seen.push(k);
      return k.toUpperCase();
    });
    expect(await Promise.all([get('a'), get('b'), get('a')])).toEqual(['A', 'B', 'A']);
    // 'a' twice at once: one read running, one queued after it (it arrived while the first ran).
    expect(seen.sort()).toEqual(['a', 'a', 'b']);
    await get('a');
    expect(seen.filter((k) => k === 'a')).toHaveLength(3);
  });
});
