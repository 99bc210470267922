import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { answerBytes, answerBytesAtMost, answerBytesIfFew, fitting } from '../../shared/domain/answer-size.ts';

describe('answer size', () => {
  it('the cheap bound (3 bytes a unit of the JSON) is never under the bytes as Lambda writes them, whatever the characters', () => {
    for (const ch of ['"', '\\', '\u0001', '\n', 'a', '\u00e9', '\u20ac', '\uffff', '\u{1F600}', '\ud800', '\udfff', '\u2028']) {
      const value = { s: ch.repeat(1000), [ch]: [ch, { [ch]: ch }] };
      expect(answerBytesAtMost(JSON.stringify(value)), JSON.stringify(ch)).toBeGreaterThanOrEqual(answerBytes(value));
    }
    // As Lambda's JSON holds a body: the body's own JSON string, quotes and backslashes escaped again.
    expect(answerBytes({ a: '"' })).toBe(Buffer.byteLength(JSON.stringify(JSON.stringify({ a: '"' }))) - 2);
  });

  it('counts a page exactly past the bound: as many as fit, one at least, all when they do', () => {
    const item = { k: '"'.repeat(1000) };
    const each = answerBytes(item);
    const page = Array.from({ length: 10 }, () => item);
    // Brackets, and a comma between.
    expect(fitting(page, 2 + 3 * each + 2)).toBe(3);
    expect(fitting(page, 2 + 3 * each + 1)).toBe(2);
    expect(fitting(page, 1)).toBe(1);
    expect(fitting(page, 10 * each + 11)).toBe(10);
    expect(fitting([], 1)).toBe(0);
  });

  it('counts a page of long texts past the bound exactly from its one JSON, not item by item (2 MB: one JSON.stringify, not 201)', () => {
    // 100 items of 20,000-character descriptions: 2 MB of JSON, past the cheap bound (6 MB) and well within the answer.
    const page = Array.from({ length: 100 }, (_, i) => ({ id: String(i), name: `Item "${i}"`, description: 'lorem ipsum dolor '.repeat(1112), metadata: { a: 'b\\c' } }));
    expect(answerBytesAtMost(JSON.stringify(page))).toBeGreaterThan(5_000_000);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      expect(fitting(page)).toBe(100);
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
    expect(answerBytesIfFew(JSON.stringify(page))).toBe(answerBytes(page));
  });

  it('answerBytesIfFew is answerBytes exactly, whatever the characters, or undefined when quotes and backslashes are many', () => {
    const chars = ['"', '\\', '\u0001', '\n', 'a', ' ', '\u00e9', '\u20ac', '\uffff', '\u{1F600}', '\ud800', '\udfff', '\u2028', '\u007f'];
    for (const ch of chars) {
      // Few: one among long text; many: the text of them.
      const few = { s: `${'lorem ipsum '.repeat(200)}${ch}`, [ch]: [ch] };
      expect(answerBytesIfFew(JSON.stringify(few)), JSON.stringify(ch)).toBe(answerBytes(few));
      const many = { s: ch.repeat(1000) };
      const counted = answerBytesIfFew(JSON.stringify(many));
      if (counted !== undefined) expect(counted, JSON.stringify(ch)).toBe(answerBytes(many));
    }
    expect(answerBytesIfFew(JSON.stringify({ s: '"'.repeat(1000) }))).toBeUndefined();
    expect(answerBytesIfFew(JSON.stringify({ s: '\u0001'.repeat(1000) }))).toBeUndefined();
  });

  it("an item at the create limits takes about 180 KB as Lambda writes it: 100 take 18 MB, 27 fit (docs/api.md's figures)", async () => {
    const { createItemsBody } = await import('../../shared/schemas/items.ts');
    const { itemResource } = await import('../../shared/domain/present.ts');
    // Control characters in name and description (7 bytes each, escaped twice), quotes in metadata (4 for their 2 of JSON).
    const body = { name: '\u0001'.repeat(1000), description: '\u0001'.repeat(20_000), metadata: { k: '"'.repeat(8187) } };
    expect(createItemsBody.safeParse(body).success).toBe(true);
    const item = itemResource({ id: 123_456, ...body, active: true, created: 1_800_000_000, updated_at: 1_800_000_000, embedding_updated_at: 1_800_000_000 });
    expect(Math.round(answerBytes(item) / 1000)).toBe(180);
    const page = Array.from({ length: 100 }, () => item);
    expect(Math.round(answerBytes(page) / 1_000_000)).toBe(18);
    expect(fitting(page)).toBe(27);
    const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    for (const said of ['up to 15 MB', 'the best 40 or so']) expect(docs.includes(said), said).toBe(false);
    for (const said of ['100 items near the size limits above take up to 18 MB', 'answer the best 27 (items of 180 KB as Lambda writes them) or more']) expect(docs.includes(said), said).toBe(true);
  });
});
