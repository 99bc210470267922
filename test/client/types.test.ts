/** The client's generated types cannot drift from docs/openapi.json. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSchema, SCHEMA_PATH } from '../../packages/client/scripts/types.ts';

describe('@recsearch/client generated types', () => {
  it('packages/client/src/schema.ts is what `npm run client:types` writes from docs/openapi.json now', async () => {
    const committed = readFileSync(SCHEMA_PATH, 'utf8');
    const fresh = await generateSchema();
    // A stale file: run `npm run client:types` (after `npm run openapi`).
    expect(committed === fresh, 'packages/client/src/schema.ts is stale: run npm run client:types').toBe(true);
  });
});
