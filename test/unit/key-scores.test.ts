import { describe, expect, it } from 'vitest';
import { KeyScores } from '../../shared/search/key-scores.ts';

describe('KeyScores, the ranking scratch of vector scores by key', () => {
  it('keeps keys in the order they first got a score, overwrites in place, and keeps them across growth', () => {
    const s = new KeyScores();
    s.reserve(4);
    s.set(3, 0.5);
    s.set(1, 0);
    s.set(3, 0.7);
    expect([...s.keys()]).toEqual([3, 1]);
    expect([s.get(3), s.get(1), s.get(0)]).toEqual([0.7, 0, undefined]);
    expect(s.has(1) && !s.has(2)).toBe(true);
    s.reserve(100);
    s.set(99, -0.25);
    expect([...s.keys()]).toEqual([3, 1, 99]);
    expect([s.get(3), s.size, s.max(1e-9)]).toEqual([0.7, 3, 0.7]);
    expect(s.get(1000)).toBeUndefined();
  });

  it('is empty again after clear, for the next request', () => {
    const s = new KeyScores();
    s.reserve(10);
    s.set(5, 0.9);
    s.clear();
    expect([s.size, s.get(5), s.max(0.01)]).toEqual([0, undefined, 0.01]);
    s.set(5, 0.1);
    expect([...s.keys()]).toEqual([5]);
  });
});
