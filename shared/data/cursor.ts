import { InvalidInput } from '../domain/errors.ts';

/**
 * A list's cursor as the API hands it out: the last row's sort key, opaque (base64url), so key
 * formats never leave the data layer. `decode` answers the sort key to read after, and refuses
 * (400) anything whose sort key does not have the list's `shape`: a cursor this API never gave.
 */
export function sortKeyCursor(shape: RegExp): { encode(sk: string): string; decode(cursor: string): string } {
  return {
    encode: (sk) => Buffer.from(sk).toString('base64url'),
    decode(cursor) {
      const sk = Buffer.from(cursor, 'base64url').toString();
      if (!shape.test(sk)) throw new InvalidInput('Invalid cursor.', { cursor: ['Not a cursor returned by this API.'] });
      return sk;
    },
  };
}
