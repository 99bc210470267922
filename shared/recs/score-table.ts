/**
 * Scores by item id for one ranking at a time, in typed arrays (open addressing) that every
 * request of the container reuses: a ranking fills it after `clear()` and reads it without
 * awaiting in between, and allocates no map of its candidates. Ids are positive integers.
 */
export class ScoreTable {
  private ids = new Float64Array(1024);
  private values = new Float64Array(1024);
  /** Filled slots in the order their ids were added. */
  private filled = new Int32Array(512);
  private shift = 22;
  size = 0;

  clear(): void {
    for (let k = 0; k < this.size; k++) this.ids[this.filled[k] as number] = 0;
    this.size = 0;
  }

  /** Adds `value` to the score of `id` (0 before its first add). */
  add(id: number, value: number): void {
    if (2 * (this.size + 1) > this.ids.length) this.grow();
    const { ids } = this;
    const mask = ids.length - 1;
    let h = Math.imul((id >>> 0) ^ Math.floor(id / 4294967296), 0x9e3779b1) >>> this.shift;
    while (ids[h] !== 0 && ids[h] !== id) h = (h + 1) & mask;
    if (ids[h] === 0) {
      ids[h] = id;
      this.values[h] = value;
      this.filled[this.size++] = h;
    } else this.values[h] = (this.values[h] as number) + value;
  }

  forEach(fn: (score: number, id: number) => void): void {
    for (let k = 0; k < this.size; k++) {
      const h = this.filled[k] as number;
      fn(this.values[h] as number, this.ids[h] as number);
    }
  }

  private grow(): void {
    const { ids, values, filled, size } = this;
    this.ids = new Float64Array(ids.length * 2);
    this.values = new Float64Array(ids.length * 2);
    this.filled = new Int32Array(ids.length);
    this.shift -= 1;
    this.size = 0;
    for (let k = 0; k < size; k++) this.add(ids[filled[k] as number] as number, values[filled[k] as number] as number);
  }
}
