import { describe, expect, it } from 'vitest';
import { answerBytes, answerBytesAtMost, fitting } from '../../shared/domain/answer-size.ts';

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
});
