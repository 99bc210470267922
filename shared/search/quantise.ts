/** Quantisation of float vectors to int8 rows with one scale each (a quarter of float32's memory). */
import { Int8Rows } from './int8-vectors.ts';

/**
 * Writes values[from..from+dims) as int8 to out[at..), its largest magnitude as ±127, and returns
 * the scale back to floats (0, and nothing written, for a zero vector).
 */
export function quantiseInto(values: ArrayLike<number>, from: number, dims: number, out: Int8Array, at: number): number {
  let max = 0;
  for (let k = 0; k < dims; k++) max = Math.max(max, Math.abs(values[from + k] as number));
  if (max === 0) return 0;
  const scale = max / 127;
  for (let k = 0; k < dims; k++) out[at + k] = Math.round((values[from + k] as number) / scale);
  return scale;
}

/** Float rows as int8 rows with one scale each, for the kernel (`scanRows`: the most rows one `scan` of them scores). */
export function quantisedRows(values: Float32Array, dims: number, scanRows = 0): { rows: Int8Rows; scales: Float32Array } {
  const q8 = new Int8Array(values.length);
  const scales = Float32Array.from({ length: dims ? values.length / dims : 0 }, (_, r) => quantiseInto(values, r * dims, dims, q8, r * dims));
  return { rows: new Int8Rows(q8, dims, scanRows), scales };
}

/** The dequantised vector of int8 row `row` (dims values from row × dims) at `scale`. */
export function dequantise(rows: Int8Array, row: number, dims: number, scale: number): Float32Array {
  const v = new Float32Array(dims);
  const o = row * dims;
  for (let k = 0; k < dims; k++) v[k] = (rows[o + k] as number) * scale;
  return v;
}
