import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, encodeOffsetCursor, hitVersion, plannedAsOf } from '../../shared/search/cursor.ts';
import { searchBody } from '../../shared/schemas/search.ts';

const raw = (v: unknown[]) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** An item as ranking holds it. */
const item = (id: number) => ({ id, name: 'Tent', metadata: { a: 1, b: 2 }, active: true, created: 1, updated_at: 1_700_000_000, embedding_updated_at: null, vector: null });

describe('search cursors', () => {
  it("a context's cursor holds when its list was planned, and the newest event of the first page's read", () => {
    const c = encodeOffsetCursor(10, { builtAt: 1_700_000_000, list: 'digest', asOf: 41, upTo: 500, vectorsAsOf: 1_700_000_100_250 }, 1_700_000_123, item(77));
    expect(decodeCursor(c, 'starting_after')).toEqual({
      score: 0,
      id: 0,
      offset: 10,
      builtAt: 1_700_000_000,
      list: 'digest',
      asOf: 41,
      upTo: 500,
      at: 1_700_000_123,
      vectorsAsOf: 1_700_000_100_250,
      lastId: 77,
      version: hitVersion(item(77)),
    });
    // One issued before it named that hit's version (nine elements) names its id alone; before it
    // named the hit before its position (eight), neither: it goes on from the position alone.
    expect(decodeCursor(raw(['o', 10, 1, 'digest', null, 500, 7, 9, 77]), 'starting_after')).toEqual({
      score: 0,
      id: 0,
      offset: 10,
      builtAt: 1,
      list: 'digest',
      upTo: 500,
      at: 7,
      vectorsAsOf: 9,
      lastId: 77,
    });
    expect(decodeCursor(raw(['o', 10, 1, 'digest', null, 500, 7, 9]), 'starting_after')).toEqual({ score: 0, id: 0, offset: 10, builtAt: 1, list: 'digest', upTo: 500, at: 7, vectorsAsOf: 9 });
    expect(plannedAsOf(c)).toEqual({ at: 1_700_000_123, eventsBelow: 42 });
    // A list whose controls weigh popularity: the newest event id of the count its first page
    // weighed too (eleven elements, since 2026-12-07); the ten of the version before are read as
    // before (later pages weigh the count in hand).
    const popular = encodeOffsetCursor(10, { builtAt: 1_700_000_000, list: 'digest', asOf: 41, upTo: 500, vectorsAsOf: 9 }, 1_700_000_123, item(77), 9_000_001);
    expect(decodeCursor(popular, 'starting_after')).toMatchObject({ offset: 10, lastId: 77, version: hitVersion(item(77)), popularUpTo: 9_000_001 });
    expect(decodeCursor(c, 'starting_after')).not.toHaveProperty('popularUpTo');
    expect(plannedAsOf(popular)).toEqual({ at: 1_700_000_123, eventsBelow: 42 });
    // The longest (every number at its largest) fits starting_after.
    const M = Number.MAX_SAFE_INTEGER;
    const longest = encodeOffsetCursor(M, { builtAt: M, list: 'd'.repeat(12), asOf: M, upTo: M, vectorsAsOf: M }, M, item(M), M);
    expect(longest.length).toBeLessThanOrEqual(256);
    expect(searchBody.safeParse({ query: 'x', starting_after: longest }).success).toBe(true);
    expect(decodeCursor(longest, 'starting_after')).toMatchObject({ offset: M, popularUpTo: M });
    // Without a user: planned at its time, on no events.
    expect(plannedAsOf(encodeOffsetCursor(10, { builtAt: 1, list: undefined, asOf: undefined, upTo: 5, vectorsAsOf: 0 }, 77, item(3)))).toEqual({ at: 77, eventsBelow: undefined });
  });

  it('cursors issued before they held it are taken and planned anew; others are no plan, and refused when read', () => {
    const old = raw(['o', 10, 1_700_000_000, 'digest', 41, 500]);
    expect(decodeCursor(old, 'starting_after')).toEqual({ score: 0, id: 0, offset: 10, builtAt: 1_700_000_000, list: 'digest', asOf: 41, upTo: 500 });
    expect(plannedAsOf(old)).toBeUndefined();
    expect(plannedAsOf(encodeCursor({ score: 0.5, doc: item(3) }, { builtAt: 1, list: undefined, asOf: undefined, upTo: 5, vectorsAsOf: 9 }))).toBeUndefined();
    // A relevance cursor names its view's time (ms) and its hit's version; one issued before (six
    // elements) names neither, one issued before it named the hit's (seven) only the first, one
    // that named its hit's updated_at instead (eight, a number: 2026-12-06) no version.
    const doc = item(3);
    const version = hitVersion(doc);
    expect(decodeCursor(encodeCursor({ score: 0.5, doc }, { builtAt: 1, list: 'd', asOf: undefined, upTo: 5, vectorsAsOf: 1_700_000_000_123 }), 'starting_after')).toEqual({
      score: 0.5,
      id: 3,
      builtAt: 1,
      list: 'd',
      upTo: 5,
      vectorsAsOf: 1_700_000_000_123,
      version,
    });
    // The same item read with its metadata's keys in another order is the same version; written
    // again (in the same second), given a vector, or made inactive, another.
    expect(hitVersion({ ...doc, metadata: { b: 2, a: 1 } })).toBe(version);
    for (const changed of [
      { name: 'Tent 2' },
      { description: 'x' },
      { metadata: { a: 2, b: 2 } },
      { embedding_updated_at: 1_700_000_000 },
      { embedded_ms: 1_700_000_000_001 },
      { active: false },
      { updated_at: 1_700_000_001 },
    ])
      expect(hitVersion({ ...doc, ...changed }), JSON.stringify(changed)).not.toBe(version);
    // With the hit before the last on its page: its id and version too.
    const before = encodeCursor({ score: 0.5, doc }, { builtAt: 1, list: 'd', asOf: undefined, upTo: 5, vectorsAsOf: 9 }, item(2));
    expect(decodeCursor(before, 'starting_after')).toMatchObject({ id: 3, version, prev: { id: 2, version: hitVersion(item(2)) } });
    // A page of one hit names none before it: the hit after it (its id negated), unless it has one before.
    const single = encodeCursor({ score: 0.5, doc }, { builtAt: 1, list: 'd', asOf: undefined, upTo: 5, vectorsAsOf: 9 }, undefined, item(4));
    expect(decodeCursor(single, 'starting_after')).toMatchObject({ id: 3, version, next: { id: 4, version: hitVersion(item(4)) } });
    expect(decodeCursor(single, 'starting_after')).not.toHaveProperty('prev');
    expect(decodeCursor(encodeCursor({ score: 0.5, doc }, { builtAt: 1, list: 'd', asOf: undefined, upTo: 5, vectorsAsOf: 9 }, item(2), item(4)), 'starting_after')).not.toHaveProperty('next');
    // The longest such cursor (every number at its largest, a score of 17 digits and an exponent) fits starting_after.
    const M = Number.MAX_SAFE_INTEGER;
    const longest = encodeCursor({ score: (-(0.1 + 0.2) / 7) * 1e-300, doc: item(M) }, { builtAt: M, list: 'd'.repeat(12), asOf: M, upTo: M, vectorsAsOf: M }, undefined, item(M));
    expect(longest.length).toBeLessThanOrEqual(256);
    expect(searchBody.safeParse({ query: 'x', starting_after: longest }).success).toBe(true);
    expect(decodeCursor(raw([0.5, 3, 1, 'd', null, 5, 7, 1_700_000_000]), 'starting_after')).toEqual({ score: 0.5, id: 3, builtAt: 1, list: 'd', upTo: 5, vectorsAsOf: 7 });
    expect(decodeCursor(raw([0.5, 3, 1, 'd', null, 5, 7]), 'starting_after')).toEqual({ score: 0.5, id: 3, builtAt: 1, list: 'd', upTo: 5, vectorsAsOf: 7 });
    expect(decodeCursor(raw([0.5, 3, 1, 'd', null, 5]), 'starting_after')).toEqual({ score: 0.5, id: 3, builtAt: 1, list: 'd', upTo: 5 });
    for (const bad of [
      raw([0.5, 3, 1, 'd', null, 5, -1]),
      raw([0.5, 3, 1, 'd', null, 5, 7, -8]),
      raw([0.5, 3, 1, 'd', null, 5, 7, 8.5]),
      raw([0.5, 3, 1, 'd', null, 5, 7, '']),
      raw([0.5, 3, 1, 'd', null, 5, 7, null]),
      raw([0.5, 3, 1, 'd', null, 5, 7, 8, 9]),
      raw([0.5, 3, 1, 'd', null, 5, 7, 'v', 0, 'w']),
      raw([0.5, 3, 1, 'd', null, 5, 7, 'v', -2.5, 'w']),
      raw([0.5, 3, 1, 'd', null, 5, 7, 'v', 2, '']),
      raw([0.5, 3, 1, 'd', null, 5, 7, 8, 2, 'w']),
      raw([0.5, 3, 1, 'd', null, 5, 7, 'v', 2, 'w', 1]),
    ])
      expect(() => decodeCursor(bad, 'starting_after')).toThrow('Invalid cursor.');
    expect(plannedAsOf(undefined)).toBeUndefined();
    for (const bad of [
      raw(['o', 10, 1, 'd', 41, 500, -1]),
      raw(['o', 10, 1, 'd', 41, 500, 1.5]),
      raw(['o', 10, 1, 'd', 41, 500, 7, -8]),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 0]),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 9, 10]),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 9, '']),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 9, 'v', -1]),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 9, 'v', 1.5]),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 9, 'v', null]),
      raw(['o', 10, 1, 'd', 41, 500, 7, 8, 9, 'v', 11, 12]),
      'not-a-cursor',
    ]) {
      expect(plannedAsOf(bad)).toBeUndefined();
      expect(() => decodeCursor(bad, 'starting_after')).toThrow('Invalid cursor.');
    }
  });
});
