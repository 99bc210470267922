import { describe, expect, it } from 'vitest';
import { errorMessage } from '../../shared/domain/errors.ts';

describe('errorMessage', () => {
  it("gives an Error's message and any other value as text", () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });

  it('never throws on a value String cannot convert', () => {
    expect(errorMessage(Object.create(null))).toBe('[object Object]');
    const throwing = {
      toString(): string {
        throw new Error('no');
      },
    };
    expect(errorMessage(throwing)).toBe('[object Object]');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(typeof errorMessage(revoked.proxy)).toBe('string');
  });
});
