import { describe, expect, it } from 'vitest';
import { lookUp, queryCacheStats, tableChangeBegins, writeBegins } from '../../local/dynalite-query-cache.mjs';

// The local DynamoDB thread keeps Query answers until a write touches what they read
// (local/dynalite-query-cache.mjs). These sequences are the races a test over real writes can
// only hit by luck: a read that overlaps a write, in each order.

const headers = (target = 'DynamoDB_20120810.Query'): Record<string, string | undefined> => ({
  'x-amz-target': target,
  'content-type': 'application/x-amz-json-1.0',
  authorization: 'AWS4-HMAC-SHA256 Credential=local/20261130/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc',
  'x-amz-date': '20261130T000000Z',
});
let n = 0;
/** A Query of `index` of table `t` with a body of its own. */
const query = (index?: string) =>
  JSON.stringify({ TableName: 't', ...(index ? { IndexName: index } : {}), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: String(n++) } } });
const ask = (body: string) => lookUp('POST', '/', headers(), body);
/** dynalite answers `body` with `text`. */
const answered = (body: string, text: string) => {
  const miss = ask(body);
  if (!miss?.keep) throw new Error('expected a miss');
  miss.keep(200, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'R' }, text);
};
/** A whole write of `indexes` of table `t`. */
const write = (indexes: string[], table = 't') => writeBegins(table, indexes)();

describe('Query answers kept in the local DynamoDB thread', () => {
  it('answers again from memory, with a request id of its own', () => {
    const q = query('gsi4');
    answered(q, '{"Items":[]}');
    const hit = ask(q);
    expect(hit?.answer?.body).toBe('{"Items":[]}');
    expect(hit?.answer?.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(hit?.answer?.headers['x-amzn-requestid']).toMatch(/^[A-Z0-9]{52}$/);
    expect(ask(q)?.answer?.headers['x-amzn-requestid']).not.toBe(hit?.answer?.headers['x-amzn-requestid']);
  });

  it('keeps no answer read while a write of what it read was under way, nor one a write began during', () => {
    // Read after a write began: not kept (it may hold the write or not), however it ends.
    const q1 = query('gsi4');
    answered(q1, 'before');
    const ended = writeBegins('t', ['gsi4']);
    expect(ask(q1)?.answer).toBeUndefined();
    answered(q1, 'while writing');
    expect(ask(q1)?.answer).toBeUndefined();
    ended();
    answered(q1, 'after');
    expect(ask(q1)?.answer?.body).toBe('after');
    // A write that began while the read ran: the answer is not kept.
    const q2 = query('gsi4');
    const miss = ask(q2);
    const ends = writeBegins('t', ['gsi4']);
    ends();
    miss?.keep?.(200, {}, 'maybe before the write');
    expect(ask(q2)?.answer).toBeUndefined();
    // Two writes under way: none is kept until both are applied.
    const [a, b] = [writeBegins('t', ['gsi4']), writeBegins('t', ['gsi4'])];
    a();
    answered(q2, 'between');
    expect(ask(q2)?.answer).toBeUndefined();
    b();
    answered(q2, 'both applied');
    expect(ask(q2)?.answer?.body).toBe('both applied');
  });

  it("keeps an index's answers through writes of the table's other indexes, not through a write of its rows for a read of the rows", () => {
    const ofIndex = query('gsi4');
    const ofRows = query();
    answered(ofIndex, 'index');
    answered(ofRows, 'rows');
    write(['gsi1']);
    expect(ask(ofIndex)?.answer?.body).toBe('index');
    expect(ask(ofRows)?.answer).toBeUndefined();
    write(['gsi4'], 'other');
    expect(ask(ofIndex)?.answer?.body).toBe('index');
    const changing = tableChangeBegins();
    expect(ask(ofIndex)?.answer).toBeUndefined();
    answered(ofIndex, 'while the table changes');
    expect(ask(ofIndex)?.answer).toBeUndefined();
    changing();
    answered(ofIndex, 'after');
    expect(ask(ofIndex)?.answer?.body).toBe('after');
  });

  it('answers only Queries as the SDK sends them (dynalite answers the rest by their headers too), keeps only answers of 200 up to 64 KB to requests up to 8 KB, and at most 512', () => {
    const q = query('gsi4');
    answered(q, 'kept');
    expect(lookUp('POST', '/', headers('DynamoDB_20120810.Scan'), q)).toBeUndefined();
    for (const other of [
      { authorization: undefined },
      { 'x-amz-date': undefined },
      { authorization: 'AWS4-HMAC-SHA256 Credential=, SignedHeaders=host, Signature=abc' },
      { 'content-type': 'application/json' },
      { origin: 'http://localhost' },
    ])
      expect(lookUp('POST', '/', { ...headers(), ...other }, q)).toBeUndefined();
    expect(lookUp('POST', '/?X-Amz-Algorithm=AWS4-HMAC-SHA256', headers(), q)).toBeUndefined();
    expect(lookUp('POST', '/', headers(), 'not json')).toBeUndefined();
    expect(ask(JSON.stringify({ TableName: 't', FilterExpression: 'x'.repeat(8 * 1024) }))).toBeUndefined();
    const other = query('gsi4');
    ask(other)?.keep?.(400, {}, '{"__type":"ValidationException"}');
    expect(ask(other)?.answer).toBeUndefined();
    ask(other)?.keep?.(200, {}, 'x'.repeat(64 * 1024 + 1));
    expect(ask(other)?.answer).toBeUndefined();
    const bodies = Array.from({ length: 513 }, () => query('gsi4'));
    for (const b of bodies) answered(b, b);
    expect(queryCacheStats().kept).toBe(512);
    // The least recently used goes first.
    expect(ask(bodies[0] as string)?.answer).toBeUndefined();
    expect(ask(bodies[512] as string)?.answer?.body).toBe(bodies[512]);
  });
});
