import { bytesOf, copyingBytes } from '../concurrency.ts';
import { F32_KERNEL_WASM } from './f32-kernel.ts';

/** The float32 kernels (f32-kernel.wat), compiled once per container. */
const kernel = new WebAssembly.Module(Buffer.from(F32_KERNEL_WASM, 'base64'));

/** A byte size rounded up to whole 64-byte lines. */
const lines = (bytes: number) => Math.ceil(bytes / 64) * 64;

/**
 * `count` rows of `dims` float32 values in WebAssembly memory, with the two products serving
 * needs, 4 values per step (SIMD): every row's dot product with a vector (iALS scores every item:
 * 9,742 × 128 in about a fifth of the JavaScript loop's time) and a weighted sum of rows (EASE
 * adds a history item's weights). Sums are float32 in a fixed order, so a model scores the same
 * wherever it runs. `rows` is an ordinary Float32Array view of the rows.
 */
export class F32Rows {
  readonly rows: Float32Array;
  private readonly scoresAt: (rows: number, u: number, n: number, d: number, out: number) => void;
  private readonly axpyAt: (acc: number, v: number, f: number, n: number) => void;
  /** Memory: a vector slot (dims), an output slot (max(count, dims)), the rows. */
  private readonly vec: Float32Array;
  private readonly out: Float32Array;
  private readonly outAt: number;
  private readonly base: number;

  /** Copies `src` (count × dims values) into the kernel's memory (`copy` false: room for them only, `filling` copies them). */
  constructor(
    src: Float32Array,
    readonly count: number,
    readonly dims: number,
    copy = true,
  ) {
    if (src.length !== count * dims) throw new RangeError(`${count} rows of ${dims} values are ${count * dims} values, not ${src.length}.`);
    this.outAt = lines(dims * 4);
    this.base = this.outAt + lines(Math.max(count, dims) * 4);
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((this.base + src.length * 4) / 65536)) });
    const instance = new WebAssembly.Instance(kernel, { env: { memory } });
    this.scoresAt = instance.exports.scores as F32Rows['scoresAt'];
    this.axpyAt = instance.exports.axpy as F32Rows['axpyAt'];
    this.vec = new Float32Array(memory.buffer, 0, dims);
    this.out = new Float32Array(memory.buffer, this.outAt, Math.max(count, dims));
    this.rows = new Float32Array(memory.buffer, this.base, src.length);
    if (copy) this.rows.set(src);
  }

  /**
   * As the constructor, copying a few MB at a time, pausing (`yield`) between (`copyingBytes`): the first writes to fresh memory cost about 3 ms a MB here, 85 ms
   * in one step for iALS's 50,000 items × 128 factors.
   */
  static *filling(src: Float32Array, count: number, dims: number): Generator<void, F32Rows, void> {
    const out = new F32Rows(src, count, dims, false);
    yield* copyingBytes(bytesOf(out.rows), bytesOf(src));
    return out;
  }

  /** into[i] = rows[i] · u for every row (u: dims values; into: at least count values). */
  dotAll(u: ArrayLike<number>, into: Float32Array): Float32Array {
    this.vec.set(u);
    this.scoresAt(this.base, 0, this.count, this.dims, this.outAt);
    into.set(this.out.subarray(0, this.count));
    return into;
  }

  /** into = Σ_j weights[j] × rows[which[j]], into of dims values (overwritten). */
  sumRows(which: ArrayLike<number>, weights: ArrayLike<number>, into: Float32Array): Float32Array {
    const acc = this.out.subarray(0, this.dims).fill(0);
    for (let j = 0; j < which.length; j++) this.axpyAt(this.outAt, this.base + (which[j] as number) * this.dims * 4, weights[j] as number, this.dims);
    into.set(acc);
    return into;
  }
}
