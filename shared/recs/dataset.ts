/** Interactions indexed for training: users and items as dense indexes, rows in CSR form. */
export interface Interaction {
  user: string;
  item: number;
  /** The event type's weight (1–100), summed over repeated interactions. */
  weight: number;
  /** Unix seconds; NaN when unknown (an event stamped on arrival, not sent with its time). */
  at: number;
}

export class Dataset {
  readonly users: string[] = [];
  readonly items: number[] = [];
  readonly userIndex = new Map<string, number>();
  readonly itemIndex = new Map<number, number>();
  /** rowStart[u]..rowStart[u+1] index into cols/vals: user u's items and weights. */
  readonly rowStart: Uint32Array;
  readonly cols: Uint32Array;
  readonly vals: Float32Array;
  /** When each of cols/vals happened (unix seconds; the latest of a repeated interaction; NaN when any of them is unknown). */
  readonly times: Float64Array;
  /** Interactions per item (its popularity, weighted). */
  readonly itemWeight: Float64Array;
  readonly itemCount: Uint32Array;

  constructor(interactions: Interaction[], itemUniverse?: number[]) {
    for (const id of itemUniverse ?? []) this.addItem(id);
    const byUser = new Map<number, Map<number, [weight: number, at: number]>>();
    for (const x of interactions) {
      let u = this.userIndex.get(x.user);
      if (u === undefined) {
        u = this.users.length;
        this.users.push(x.user);
        this.userIndex.set(x.user, u);
      }
      const i = this.addItem(x.item);
      let row = byUser.get(u);
      if (!row) byUser.set(u, (row = new Map()));
      const had = row.get(i);
      row.set(i, had ? [had[0] + x.weight, Math.max(had[1], x.at)] : [x.weight, x.at]);
    }
    this.rowStart = new Uint32Array(this.users.length + 1);
    let nnz = 0;
    for (let u = 0; u < this.users.length; u++) {
      this.rowStart[u] = nnz;
      nnz += byUser.get(u)?.size ?? 0;
    }
    this.rowStart[this.users.length] = nnz;
    this.cols = new Uint32Array(nnz);
    this.vals = new Float32Array(nnz);
    this.times = new Float64Array(nnz);
    this.itemWeight = new Float64Array(this.items.length);
    this.itemCount = new Uint32Array(this.items.length);
    for (let u = 0; u < this.users.length; u++) {
      let k = this.rowStart[u] as number;
      for (const [i, [w, at]] of [...(byUser.get(u) ?? new Map<number, [number, number]>())].sort((a, b) => a[0] - b[0])) {
        this.cols[k] = i;
        this.vals[k] = w;
        this.times[k] = at;
        this.itemWeight[i] = (this.itemWeight[i] as number) + w;
        this.itemCount[i] = (this.itemCount[i] as number) + 1;
        k++;
      }
    }
  }

  private addItem(id: number): number {
    let i = this.itemIndex.get(id);
    if (i === undefined) {
      i = this.items.length;
      this.items.push(id);
      this.itemIndex.set(id, i);
    }
    return i;
  }

  row(u: number): { items: Uint32Array; weights: Float32Array; times: Float64Array } {
    const s = this.rowStart[u] as number;
    const e = this.rowStart[u + 1] as number;
    return { items: this.cols.subarray(s, e), weights: this.vals.subarray(s, e), times: this.times.subarray(s, e) };
  }

  get nnz(): number {
    return this.cols.length;
  }
}
