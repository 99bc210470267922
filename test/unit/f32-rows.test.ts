import { describe, expect, it } from 'vitest';
import { F32Rows } from '../../shared/recs/f32-rows.ts';
import { seededRandom } from '../../shared/random.ts';

/*
 * The float32 SIMD kernels that score iALS items and sum EASE rows at serving (and wherever a
 * model scores): the exact sums to float32 precision, for every size the loops meet.
 */

describe('float32 SIMD kernels', () => {
  it("give every row's dot product with a vector, and weighted sums of rows, for every size", () => {
    const rand = seededRandom(11);
    for (const dims of [1, 3, 4, 7, 8, 9, 13, 16, 31, 128, 130]) {
      for (const count of [0, 1, 5, 37]) {
        const src = Float32Array.from({ length: count * dims }, () => rand() * 2 - 1);
        const rows = new F32Rows(src, count, dims);
        expect(Array.from(rows.rows)).toEqual(Array.from(src));
        const u = Float32Array.from({ length: dims }, () => rand() * 2 - 1);
        // Into a longer array: only the first `count` values are written.
        const out = rows.dotAll(u, new Float32Array(count + 2).fill(9));
        for (let i = 0; i < count; i++) {
          let exact = 0;
          for (let k = 0; k < dims; k++) exact += (src[i * dims + k] as number) * (u[k] as number);
          expect(out[i], `${count} × ${dims}, row ${i}`).toBeCloseTo(exact, 4);
        }
        expect(Array.from(out.subarray(count))).toEqual([9, 9]);
        if (count === 0) continue;
        const which = [0, count - 1, Math.floor(count / 2), 0];
        const weights = [0.5, -2, 1.25, 3];
        const sum = rows.sumRows(which, weights, new Float32Array(dims).fill(7));
        for (let k = 0; k < dims; k++) {
          const exact = which.reduce((s, r, j) => s + (weights[j] as number) * (src[r * dims + k] as number), 0);
          expect(sum[k], `${count} × ${dims}, value ${k}`).toBeCloseTo(exact, 4);
        }
        // Nothing to add: zeros (the sum starts over each time).
        expect(Array.from(rows.sumRows([], [], new Float32Array(dims).fill(7)))).toEqual(Array.from({ length: dims }, () => 0));
      }
    }
  });

  it('scores the same for the same inputs, call after call', () => {
    const rand = seededRandom(5);
    const rows = new F32Rows(
      Float32Array.from({ length: 300 * 128 }, () => rand() - 0.5),
      300,
      128,
    );
    const u = Float32Array.from({ length: 128 }, () => rand() - 0.5);
    const first = Array.from(rows.dotAll(u, new Float32Array(300)));
    rows.sumRows([1, 2], [1, 1], new Float32Array(128));
    expect(Array.from(rows.dotAll(u, new Float32Array(300)))).toEqual(first);
  });

  it('refuses rows that do not fit their size', () => {
    expect(() => new F32Rows(new Float32Array(10), 3, 4)).toThrow(RangeError);
  });
});
