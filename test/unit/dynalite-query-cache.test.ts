import { describe, expect, it } from 'vitest';
import { lookUp, queryCacheStats, tablesChanged, written } from '../../local/dynalite-query-cache.mjs';

// The local DynamoDB thread keeps Query answers until a write touches what they read
// (local/dynalite-query-cache.mjs). These sequences are the races a test over real writes can
// only hit by luck: a read that overlaps a write, in each order.

const headers = (target = 'DynamoDB_20120810.Query') => ({
  'x-amz-target': target,
  authorization: 'AWS4-HMAC-SHA256 Credential=local/20261130/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc',
  'x-amz-date': '20261130T000000Z',
});
let n = 0;
/** A Query of `index` of table `t` with a body of its own. */
const query = (index?: string) =>
  JSON.stringify({ TableName: 't', ...(index ? { IndexName: index } : {}), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: String(n++) } } });
const ask = (body: string) => lookUp('POST', headers(), body);
const answer = (text: string) => ({ status: 200, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'R' }, body: text });
/** dynalite answers `body` with `text`. */
const answered = (body: string, text: string) => {
  const miss = ask(body);
  if (!miss?.keep) throw new Error('expected a miss');
  miss.keep(200, answer(text).headers, text);
};

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

  it('does not keep an answer read while a write of what it read was under way, nor one a write began during', () => {
    // Read after a write began, kept before it ended: the write ending moves it out.
    const q1 = query('gsi4');
    written('t', ['gsi4']);
    answered(q1, 'before the write');
    expect(ask(q1)?.answer?.body).toBe('before the write');
    written('t', ['gsi4']);
    expect(ask(q1)?.answer).toBeUndefined();
    // A write that began while the read ran: the answer is not kept.
    const q2 = query('gsi4');
    const miss = ask(q2);
    written('t', ['gsi4']);
    miss?.keep?.(200, {}, 'maybe before the write');
    written('t', ['gsi4']);
    expect(ask(q2)?.answer).toBeUndefined();
  });

  it("keeps an index's answers through writes of the table's other indexes, not through a write of its rows for a read of the rows", () => {
    const ofIndex = query('gsi4');
    const ofRows = query();
    answered(ofIndex, 'index');
    answered(ofRows, 'rows');
    written('t', ['gsi1']);
    written('t', ['gsi1']);
    expect(ask(ofIndex)?.answer?.body).toBe('index');
    expect(ask(ofRows)?.answer).toBeUndefined();
    written('other', ['gsi4']);
    expect(ask(ofIndex)?.answer?.body).toBe('index');
    tablesChanged();
    expect(ask(ofIndex)?.answer).toBeUndefined();
  });

  it('answers nothing but signed Queries, keeps only answers of 200 up to 64 KB, and at most 512 of them', () => {
    const q = query('gsi4');
    expect(lookUp('POST', headers('DynamoDB_20120810.Scan'), q)).toBeUndefined();
    expect(lookUp('POST', { ...headers(), authorization: undefined }, q)).toBeUndefined();
    expect(lookUp('POST', { ...headers(), 'x-amz-date': undefined }, q)).toBeUndefined();
    expect(lookUp('POST', headers(), 'not json')).toBeUndefined();
    ask(q)?.keep?.(400, {}, '{"__type":"ValidationException"}');
    expect(ask(q)?.answer).toBeUndefined();
    ask(q)?.keep?.(200, {}, 'x'.repeat(64 * 1024 + 1));
    expect(ask(q)?.answer).toBeUndefined();
    tablesChanged();
    const bodies = Array.from({ length: 513 }, () => query('gsi4'));
    for (const b of bodies) answered(b, b);
    expect(queryCacheStats().kept).toBe(512);
    // The least recently used goes first.
    expect(ask(bodies[0] as string)?.answer).toBeUndefined();
    expect(ask(bodies[512] as string)?.answer?.body).toBe(bodies[512]);
  });
});
