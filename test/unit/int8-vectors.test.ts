import { describe, expect, it } from 'vitest';
import { Int8Rows, MAX_KERNEL_DIMS, type QuantisedQuery, quantisedQuery } from '../../shared/search/int8-vectors.ts';

/** A deterministic pseudo-random sequence (xorshift32). */
function random(seed: number) {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function rowsOf(count: number, dims: number, next: () => number, values?: (k: number) => number) {
  return Int8Array.from({ length: count * dims }, (_, k) => (values ? values(k) : Math.round(next() * 254) - 127));
}

const exact = (rows: Int8Array, dims: number, i: number, q: Float32Array, n = dims) => {
  let s = 0;
  for (let k = 0; k < n; k++) s += (rows[i * dims + k] as number) * (q[k] as number);
  return s;
};

describe('int8 SIMD dot kernel', () => {
  it('matches the exact dot product for every size, prefix length and row', () => {
    const next = random(7);
    for (const dims of [1, 3, 15, 16, 17, 31, 64, 100, 256, 512, 1024]) {
      const src = rowsOf(20, dims, next);
      const rows = new Int8Rows(src, dims);
      expect(Array.from(rows.rows)).toEqual(Array.from(src));
      const q = Float32Array.from({ length: dims }, () => next() * 2 - 1);
      const dot = rows.query(q);
      let norm = 0;
      for (const x of q) norm += Math.abs(x);
      for (let i = 0; i < 20; i++) {
        for (const n of [dims, Math.max(1, dims >> 2), dims - 1]) {
          // Quantising the query to int16 errs by at most half a step per dimension.
          const bound = 127 * dims * (0.5 / 16383) * Math.max(...Array.from(q, Math.abs)) + 1e-9;
          expect(Math.abs(dot(i, n) - exact(src, dims, i, q, n))).toBeLessThanOrEqual(bound);
          expect(Math.abs(dot(i, n) - exact(src, dims, i, q, n))).toBeLessThan(1e-3 * 127 * norm + 1e-9);
        }
      }
    }
  });

  it('scores many rows in one call to the same sums as row by row, and refuses more rows than it holds room for', () => {
    const next = random(11);
    for (const dims of [3, 16, 17, 128, 512]) {
      const src = rowsOf(50, dims, next);
      const rows = new Int8Rows(src, dims, 64);
      const q = Float32Array.from({ length: dims }, () => next() * 2 - 1);
      const quantised = quantisedQuery(q) as QuantisedQuery;
      const one = rows.quantisedQuery(quantised);
      const many = Array.from(rows.scan(quantised, 0, 50).subarray(0, 50));
      expect(many).toEqual(Array.from({ length: 50 }, (_, i) => one(i)));
      // Between scans the single-row queries still see their own query.
      const other = rows.query(Float32Array.from({ length: dims }, () => next() * 2 - 1));
      const before = other(7);
      rows.scan(quantised, 0, 10);
      expect(other(7)).toBe(before);
    }
    // From a later row, on a prefix of the dimensions, and rows picked out of order.
    const src = rowsOf(40, 100, next);
    const rows100 = new Int8Rows(src, 100, 16);
    const quantised = quantisedQuery(Float32Array.from({ length: 100 }, () => next() * 2 - 1)) as QuantisedQuery;
    const one = rows100.quantisedQuery(quantised);
    for (const n of [100, 25, 7]) {
      expect(Array.from(rows100.scan(quantised, 20, 16, n).subarray(0, 16))).toEqual(Array.from({ length: 16 }, (_, r) => one(20 + r, n)));
      const picked = Uint32Array.from([39, 0, 17, 17, 5, 33]);
      expect(Array.from(rows100.scanOf(quantised, picked, picked.length, n).subarray(0, picked.length))).toEqual(Array.from(picked, (i) => one(i, n)));
    }
    expect(() => rows100.scanOf(quantised, new Uint32Array(17), 17)).toThrow(RangeError);
    expect(() => rows100.scan(quantised, 30, 11)).toThrow(RangeError);
    const rows = new Int8Rows(rowsOf(8, 4, next), 4, 4);
    const q = quantisedQuery(new Float32Array([1, 0, 0, 0])) as QuantisedQuery;
    expect(() => rows.scan(q, 0, 5)).toThrow(RangeError);
    expect(() => rows.scan(quantisedQuery(new Float32Array([1, 0, 0])) as QuantisedQuery, 0, 1)).toThrow(RangeError);
  });

  it('does not overflow at the largest values and the largest size', () => {
    const dims = MAX_KERNEL_DIMS;
    const src = rowsOf(2, dims, random(1), (k) => (k < dims ? 127 : -127));
    const rows = new Int8Rows(src, dims);
    const dot = rows.query(new Float32Array(dims).fill(1));
    expect(dot(0)).toBeCloseTo(127 * dims, 6);
    expect(dot(1)).toBeCloseTo(-127 * dims, 6);
    expect(() => new Int8Rows(new Int8Array(0), dims + 1)).toThrow(RangeError);
  });

  it('keeps several prepared queries apart, and scores 0 for a zero or mis-sized query', () => {
    const dims = 32;
    const src = rowsOf(4, dims, random(3));
    const rows = new Int8Rows(src, dims);
    const a = Float32Array.from({ length: dims }, (_, k) => (k % 2 ? 1 : -1));
    const b = Float32Array.from({ length: dims }, (_, k) => k / dims);
    const da = rows.query(a);
    const db = rows.query(b);
    for (let i = 0; i < 4; i++) {
      expect(da(i)).toBeCloseTo(exact(src, dims, i, a), 1);
      expect(db(i)).toBeCloseTo(exact(src, dims, i, b), 1);
      expect(da(i)).toBeCloseTo(exact(src, dims, i, a), 1);
    }
    a.fill(0);
    expect(da(0)).toBeCloseTo(
      exact(
        src,
        dims,
        0,
        Float32Array.from({ length: dims }, (_, k) => (k % 2 ? 1 : -1)),
      ),
      1,
    );
    expect(rows.query(new Float32Array(dims))(0)).toBe(0);
    expect(rows.query(new Float32Array(dims + 1))(0)).toBe(0);
  });

  it('adds weighted rows to a float sum, for every size', () => {
    const next = random(11);
    for (const dims of [1, 15, 16, 33, 512]) {
      const src = rowsOf(10, dims, next);
      const rows = new Int8Rows(src, dims);
      const start = Float32Array.from({ length: dims }, () => next() - 0.5);
      const picked = [3, 0, 9, 3];
      const weights = [0.5, -2, 1e-3, 0.25];
      const into = Float32Array.from(start);
      rows.addRows(picked, weights, into);
      for (let k = 0; k < dims; k++) {
        let want = start[k] as number;
        picked.forEach((i, j) => (want += (weights[j] as number) * (src[i * dims + k] as number)));
        expect(into[k]).toBeCloseTo(want, 3);
      }
      // The sum slot does not carry over to the next call.
      const again = new Float32Array(dims);
      rows.addRows([1], [1], again);
      expect(Array.from(again)).toEqual(Array.from(src.subarray(dims, 2 * dims)));
    }
    expect(() => new Int8Rows(new Int8Array(4), 4).addRows([0], [1], new Float32Array(3))).toThrow(RangeError);
  });

  it('scores a row as the query exactly, interleaved with other queries', () => {
    const next = random(11);
    for (const dims of [5, 16, 100, 512]) {
      const src = rowsOf(12, dims, next);
      const rows = new Int8Rows(src, dims);
      const asQuery = (r: number) => Float32Array.from(src.subarray(r * dims, (r + 1) * dims));
      const r3 = rows.int8Query(rows.rows.subarray(3 * dims, 4 * dims));
      const r7 = rows.int8Query(rows.rows.subarray(7 * dims, 8 * dims));
      const other = rows.query(Float32Array.from({ length: dims }, () => next() - 0.5));
      for (let i = 0; i < 12; i++) {
        expect(r3(i)).toBe(exact(src, dims, i, asQuery(3)));
        other(i);
        expect(r7(i)).toBe(exact(src, dims, i, asQuery(7)));
      }
    }
  });

  it("takes another kernel's row as the query, exactly as its own", () => {
    const next = random(12);
    const dims = 100;
    const src = rowsOf(6, dims, next);
    const rows = new Int8Rows(src, dims);
    const other = new Int8Rows(rowsOf(3, dims, next), dims);
    const fromOther = rows.int8Query(other.rows.subarray(dims, 2 * dims));
    const asQuery = Float32Array.from(other.rows.subarray(dims, 2 * dims));
    for (let i = 0; i < 6; i++) expect(fromOther(i)).toBe(exact(src, dims, i, asQuery));
    expect(rows.int8Query(new Int8Array(dims - 1))(0)).toBe(0);
  });

  it('gives each set of rows its own memory', () => {
    const one = new Int8Rows(Int8Array.from([1, 2, 3, 4]), 4);
    const two = new Int8Rows(Int8Array.from([-1, -2, -3, -4]), 4);
    const q = Float32Array.from([1, 1, 1, 1]);
    expect(one.query(q)(0)).toBeCloseTo(10, 3);
    expect(two.query(q)(0)).toBeCloseTo(-10, 3);
  });
});
