import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { createApiKeyBody, createClientBody, TENANT_PATTERN } from '../../shared/domain/credentials.ts';
import { CORE_SCOPES } from '../../shared/routes.ts';

/* What POST /api/api-keys and POST /api/clients take (docs/api.md, Platform API), and tenant ids. */
describe('credential request bodies', () => {
  it("an API key's environment is `production` when left out, as sent otherwise", () => {
    // Without the default a key created without one would be tagged otherwise (or refused).
    expect(z.parse(createApiKeyBody, { name: 'k', scopes: ['items'] }).environment).toBe('production');
    expect(z.parse(createApiKeyBody, { name: 'k', environment: 'staging', scopes: ['items'] }).environment).toBe('staging');
  });

  it('an API key names at least one scope: an empty list is refused, not a key that can do nothing', () => {
    expect(z.safeParse(createApiKeyBody, { name: 'k', scopes: [] }).success).toBe(false);
    expect(z.safeParse(createApiKeyBody, { name: 'k' }).success).toBe(false);
  });

  it('a client created without scopes gets every Core scope (read and write); an empty list is refused', () => {
    expect(z.parse(createClientBody, { name: 'c' }).scopes).toEqual([...CORE_SCOPES]);
    expect(z.safeParse(createClientBody, { name: 'c', scopes: [] }).success).toBe(false);
  });

  it('tenant ids are 1-63 lowercase letters, digits or dashes, starting with a letter or digit', () => {
    expect(TENANT_PATTERN.test('a'.repeat(63))).toBe(true);
    // 64 would pass were the bound off by one.
    expect(TENANT_PATTERN.test('a'.repeat(64))).toBe(false);
    expect(TENANT_PATTERN.test('-acme')).toBe(false);
    expect(TENANT_PATTERN.test('Acme')).toBe(false);
    expect(TENANT_PATTERN.test('')).toBe(false);
  });
});
