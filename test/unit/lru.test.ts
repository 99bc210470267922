import { describe, expect, it } from 'vitest';
import { Lru } from '../../shared/lru.ts';

describe('Lru (shared/lru.ts)', () => {
  it('full, lets go of the least recently used entry only: a key used since stays', () => {
    const c = new Lru<string, number>(3);
    c.set('a', 1).set('b', 2).set('c', 3);
    expect(c.get('a')).toBe(1); // a used: b is now the least recently used
    c.set('d', 4);
    expect([...c.keys()]).toEqual(['c', 'a', 'd']);
    expect([...c.entries()]).toEqual([
      ['c', 3],
      ['a', 1],
      ['d', 4],
    ]);
    expect([c.size, c.has('b'), c.get('b')]).toEqual([3, false, undefined]);
  });

  it('set of a held key replaces its value and makes it the most recently used, without letting another go', () => {
    const c = new Lru<string, number>(2);
    c.set('a', 1).set('b', 2).set('a', 10);
    expect([...c.keys()]).toEqual(['b', 'a']);
    c.set('c', 3);
    expect([...c.keys()]).toEqual(['a', 'c']);
    expect(c.get('a')).toBe(10);
  });

  it('peek and has do not use the key: it is still let go first', () => {
    const c = new Lru<string, number>(2);
    c.set('a', 1).set('b', 2);
    expect([c.peek('a'), c.has('a')]).toEqual([1, true]);
    c.set('c', 3);
    expect([c.has('a'), c.peek('b'), c.peek('c')]).toEqual([false, 2, 3]);
  });

  it('a flood of one-off keys past the bound leaves a key used between them held, and the size at the bound', () => {
    const c = new Lru<string, number>(100);
    c.set('busy', 0);
    for (let k = 0; k < 10_000; k++) {
      c.set(`one-off-${k}`, k);
      expect(c.get('busy')).toBe(0);
    }
    expect(c.size).toBe(100);
    expect(c.has('one-off-9900')).toBe(false);
    expect(c.has('one-off-9999')).toBe(true);
  });

  it('delete and clear remove; a bound below 1 is refused', () => {
    const c = new Lru<string, number>(2);
    c.set('a', 1).set('b', 2);
    expect([c.delete('a'), c.delete('a'), c.size]).toEqual([true, false, 1]);
    c.clear();
    expect(c.size).toBe(0);
    expect(() => new Lru(0)).toThrow(RangeError);
    expect(() => new Lru(1.5)).toThrow(RangeError);
  });
});
