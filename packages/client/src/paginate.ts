/** One page of a list: the spec's list envelope (`data`, `has_more`, `next_cursor`). */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string | null;
}

/**
 * A cursor-paged list: `for await (const item of paginator)` yields every element of every page,
 * following `next_cursor` (sent back as the list's cursor parameter, `starting_after` on the Core
 * API) while `has_more`. Pages are fetched lazily, one at a time.
 */
export class Paginator<T, P extends Page<T> = Page<T>> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<P>,
    private readonly startCursor?: string | undefined,
  ) {}

  /** Every page, in order. */
  async *pages(): AsyncGenerator<P, void, undefined> {
    let cursor = this.startCursor;
    // The cursor started from is one seen: a page answering it again would be that page again.
    const seen = new Set<string>(cursor ? [cursor] : []);
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.has_more || !page.next_cursor) return;
      if (seen.has(page.next_cursor)) throw new Error(`pagination did not advance (cursor ${page.next_cursor} repeated)`);
      seen.add(page.next_cursor);
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** The first page only. */
  firstPage(): Promise<P> {
    return this.fetchPage(this.startCursor);
  }

  /** Every element in one array (at most `max`). */
  async toArray(max = Number.POSITIVE_INFINITY): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const x of this) {
      out.push(x);
      if (out.length >= max) break;
    }
    return out;
  }
}
