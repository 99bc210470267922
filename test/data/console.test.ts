import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
beforeAll(async () => {
  db = await testTable();
});
afterAll(() => db.close());

describe('console store', () => {
  it('reads a tenant\'s event types and endpoints together, and each kind alone, without other kinds or tenants', async () => {
    const c = db.stores.console;
    await c.put('sv', 'event_type', { id: 1, name: 'view', weight: 1 });
    await c.put('sv', 'event_type', { id: 2, name: 'buy', weight: 20 });
    await c.put('sv', 'endpoint', { id: 1, endpoint_name: 'main', is_default: true, model_version: null });
    await c.put('sv', 'context', { id: 1, name: 'home' });
    await c.put('sv', 'model', { id: 1, version: 1 });
    await c.put('other', 'event_type', { id: 1, name: 'theirs', weight: 3 });
    await c.put('other', 'endpoint', { id: 1, endpoint_name: 'theirs', is_default: true, model_version: null });

    const cfg = await c.servingConfig('sv');
    expect(cfg.event_type.map((e) => e.name)).toEqual(['view', 'buy']);
    expect(cfg.endpoint.map((e) => e.endpoint_name)).toEqual(['main']);
    expect((await c.list('sv', 'event_type')).map((e) => e.id)).toEqual([1, 2]);
    expect((await c.list('sv', 'endpoint')).map((e) => e.endpoint_name)).toEqual(['main']);
    expect((await c.list('sv', 'context')).map((e) => e.name)).toEqual(['home']);
    expect(await c.get('sv', 'endpoint', 1)).toEqual({ id: 1, endpoint_name: 'main', is_default: true, model_version: null });
    expect(await c.update('sv', 'event_type', 2, { weight: 30 }, { weight: 20 })).toBe(true);
    expect((await c.servingConfig('sv')).event_type.map((e) => e.weight)).toEqual([1, 30]);
    expect(await c.servingConfig('none')).toEqual({ event_type: [], endpoint: [] });
  });
});
