/**
 * A growable list of integers in one typed buffer, for scratch lists that a broad query fills
 * with tens of thousands of positions: reused (cleared) instead of growing a fresh array each time.
 */
export class IntList {
  private buf = new Int32Array(1024);
  length = 0;

  clear(): void {
    this.length = 0;
  }

  push(v: number): void {
    // A full buffer grows as `room` grows it (to twice its size).
    const buf = this.length < this.buf.length ? this.buf : this.room(1);
    buf[this.length++] = v;
  }

  /**
   * The list's buffer with room for `extra` more values past `length`: a hot loop writes them at
   * `length`, `length + 1`, ... and sets `length` after (no call and no capacity check a value).
   */
  room(extra: number): Int32Array {
    const need = this.length + extra;
    if (need > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < need) size *= 2;
      const grown = new Int32Array(size);
      grown.set(this.buf.subarray(0, this.length));
      this.buf = grown;
    }
    return this.buf;
  }

  /** The values, as a view (valid until the next push, `room` or clear). */
  view(): Int32Array {
    return this.buf.subarray(0, this.length);
  }
}
