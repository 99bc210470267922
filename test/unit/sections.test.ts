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

  it('copies a large section a few MB per step (copying), and reads a section in place where its values are aligned (view)', () => {
    const big = Uint32Array.from({ length: 3 * 2 ** 20 }, (_, i) => i * 7);
    const same = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(big.buffer));
    const packed = packSections({}, [
      ['s', Int8Array.from([1, 2, 3])],
      ['big', big],
    ]);
    const { copying, view } = unpackSections(packed);
    const steps = copying<Uint32Array>('big');
    let pauses = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) pauses += 1;
    // 12 MB: three copies of 4 MB, a pause between each two.
    expect(pauses).toBe(2);
    expect(same(step.value)).toBe(true);
    expect(step.value.buffer === packed.buffer).toBe(false);
    expect(view<Uint32Array>('big').buffer === packed.buffer).toBe(true);
    expect(same(view<Uint32Array>('big'))).toBe(true);
    // Three bytes into a larger buffer: 4-byte values there are not aligned, so copied; bytes are read in place.
    const outer = new Uint8Array(packed.length + 3);
    outer.set(packed, 3);
    const odd = unpackSections(outer.subarray(3));
    expect(odd.view<Uint32Array>('big').buffer === outer.buffer).toBe(false);
    expect(same(odd.view<Uint32Array>('big'))).toBe(true);
    expect(odd.view<Int8Array>('s').buffer === outer.buffer).toBe(true);
    expect(Array.from(odd.view<Int8Array>('s'))).toEqual([1, 2, 3]);
  });

  it('refuses a truncated artifact', () => {
    const packed = packSections(
      {},
      arrays().map(([n, a]) => [n, a]),
    );
    expect(() => unpackSections(packed.subarray(0, packed.length - 8)).get('d')).toThrow(/truncated/);
  });
});
