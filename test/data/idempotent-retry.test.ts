import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createItems } from '../../shared/domain/items.ts';
import { httpHandler } from '../../shared/http/handler.ts';
import { idempotency } from '../../shared/http/idempotency.ts';
import { created } from '../../shared/http/respond.ts';
import type { ApiContext, HttpEvent, HttpMiddleware } from '../../shared/http/types.ts';
import type { WorkQueue } from '../../shared/queue/messages.ts';
import { createItemsBody } from '../../shared/schemas/items.ts';
import { testTable, type TestTable } from '../helpers/table.ts';

let db: TestTable;
// What the handler chain's config reads; nothing here reaches these (the stores are the test table's).
const env = { TABLE_NAME: 'unused', AUTH_ISSUER: 'http://localhost:1' };
const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
beforeAll(async () => {
  db = await testTable();
  for (const [k, v] of Object.entries(env)) process.env[k] ??= v;
});
afterAll(async () => {
  for (const [k, v] of Object.entries(before)) if (v === undefined) delete process.env[k];
  await db.close();
});

const T = 'retry';
const asTenant: HttpMiddleware = { before: (req) => void (req.context.state.tenant = T) };
const queue = { send: async () => undefined } as unknown as WorkQueue;
const event = (key: string, body: unknown): HttpEvent =>
  ({
    version: '2.0',
    routeKey: 'POST /v1/items',
    rawPath: '/v1/items',
    rawQueryString: '',
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    requestContext: { http: { method: 'POST', path: '/v1/items', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' }, requestId: 'r', routeKey: 'POST /v1/items', stage: '$default' },
    body: JSON.stringify(body),
    isBase64Encoded: false,
  }) as unknown as HttpEvent;
const context = () => ({ awsRequestId: crypto.randomUUID(), getRemainingTimeInMillis: () => 10_000 }) as unknown as ApiContext & Context;
const listAll = async () => (await db.stores.items.list(T, { limit: 100 })).rows;

describe('a create retried with its Idempotency-Key after it failed midway', () => {
  it('is stored once, under the ids of the first attempt, whatever failed after the write', async () => {
    let failures = 1;
    const handler = httpHandler('core', asTenant, { body: createItemsBody, idempotency: (f) => idempotency(f, () => db.stores.idempotency) }, async ({ tenant, body, idPlan }) => {
      const reply = created(await createItems(db.stores.items, queue, tenant, body, idPlan));
      // The rows are written; then the request fails (a timeout, a dropped connection, a crash).
      if (failures-- > 0) throw new Error('lost after writing');
      return reply;
    });
    const batch = Array.from({ length: 30 }, (_, k) => ({ name: `Lamp ${k}` }));
    const first = await handler(event('batch-1', batch), context());
    expect(first.statusCode).toBe(500);
    expect(await listAll()).toHaveLength(30);
    // Meanwhile one of them is changed and one deleted (found by a listing): the retry leaves them so.
    const [changed, removed] = await listAll();
    await db.stores.items.update(T, (changed as { id: number }).id, { name: 'Renamed meanwhile' }, Math.floor(Date.now() / 1000));
    await db.stores.items.delete(T, (removed as { id: number }).id, Math.floor(Date.now() / 1000));
    const retry = await handler(event('batch-1', batch), context());
    expect(retry.statusCode).toBe(201);
    const items = await listAll();
    expect(items).toHaveLength(29);
    expect(items.map((i) => i.id)).not.toContain((removed as { id: number }).id);
    expect(items.filter((i) => i.name === 'Renamed meanwhile')).toHaveLength(1);
    expect(JSON.parse(retry.body as string).data[0].name).toBe('Renamed meanwhile');
    expect(
      JSON.parse(retry.body as string)
        .data.map((i: { id: string }) => i.id)
        .filter((id: string) => id !== String((removed as { id: number }).id)),
    ).toEqual(items.map((i) => String(i.id)));
    // And the answer is now stored: a further retry replays it.
    const again = await handler(event('batch-1', batch), context());
    expect(again.statusCode).toBe(201);
    expect(again.headers?.['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(retry.body);
    expect(await listAll()).toHaveLength(29);
    // A single item the same way (its create guards a fresh id against reuse, not a reserved one).
    failures = 1;
    expect((await handler(event('one-1', { name: 'Single' }), context())).statusCode).toBe(500);
    const one = await handler(event('one-1', { name: 'Single' }), context());
    expect(one.statusCode).toBe(201);
    expect((await listAll()).filter((i) => i.name === 'Single')).toHaveLength(1);
  });

  it('a request refused before it wrote frees its key', async () => {
    const handler = httpHandler('core', asTenant, { body: createItemsBody, idempotency: (f) => idempotency(f, () => db.stores.idempotency) }, async ({ tenant, body, idPlan }) =>
      created(await createItems(db.stores.items, queue, tenant, body, idPlan)),
    );
    expect((await handler(event('bad-1', { name: '' }), context())).statusCode).toBe(400);
    const before = (await listAll()).length;
    expect((await handler(event('bad-1', { name: '' }), context())).statusCode).toBe(400);
    expect((await listAll()).length).toBe(before);
  });
});
