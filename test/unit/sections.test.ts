import { describe, expect, it } from 'vitest';
import { packSections, unpackSections } from '../../shared/sections.ts';

describe('artifact sections', () => {
  const arrays = () =>
    [
      ['a', Uint32Array.from([1, 2, 3])],
      ['b', Float32Array.from([0.5, -1.25])],
      ['c', Int8Array.from([-128, 0, 127])],
      ['d', Uint16Array.from([65535])],
    ] as const;

  it('round-trips, from bytes at any offset, into arrays that do not share the artifact buffer', () => {
    const packed = packSections(
      { format: 'x', n: 4 },
      arrays().map(([n, a]) => [n, a]),
    );
    // Inside a larger buffer at an odd offset, as a blob read may hand it over.
    const outer = new Uint8Array(packed.length + 3);
    outer.set(packed, 3);
    // As a Uint8Array view, and as a Node Buffer (readFileSync's answer), whose own slice
    // does not copy.
    for (const bytes of [outer.subarray(3), Buffer.from(outer.buffer, 3, packed.length)]) {
      const { header, get } = unpackSections<{ format: string; n: number }>(bytes);
      expect(header).toMatchObject({ format: 'x', n: 4 });
      for (const [name, want] of arrays()) {
        const got = get<typeof want>(name);
        expect(got.constructor).toBe(want.constructor);
        expect(Array.from(got)).toEqual(Array.from(want));
        expect(got.buffer).not.toBe(outer.buffer);
        expect(got.byteLength).toBe(got.buffer.byteLength);
      }
      expect(() => get('missing')).toThrow(/lacks section missing/);
    }
  });

  it('refuses a truncated artifact', () => {
    const packed = packSections(
      {},
      arrays().map(([n, a]) => [n, a]),
    );
    expect(() => unpackSections(packed.subarray(0, packed.length - 8)).get('d')).toThrow(/truncated/);
  });
});
