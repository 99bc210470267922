import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AwsHttpError, encodeKeyPath } from '../../shared/aws/signed-fetch.ts';
import { S3BlobStore } from '../../shared/blob.ts';
import { DeadlinePassed, withinDeadline } from '../../shared/deadline.ts';
import { serveLoopback } from '../helpers/loopback.ts';
import { credentials, region, verifySignature } from '../helpers/sigv4.ts';

let server: Awaited<ReturnType<typeof serveLoopback>>;
let base = '';
const objects = new Map<string, Buffer>();
const seen: { method: string; url: string; body: string; problem?: string }[] = [];
let failNext: number[] = [];
const etagOf = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;

beforeAll(async () => {
  server = await serveLoopback((req, body, res) => {
    const url = req.url ?? '/';
    const problem = verifySignature(req, body, 's3');
    seen.push({ method: req.method ?? '', url, body: body.toString(), ...(problem ? { problem } : {}) });
    if (problem) return void res.writeHead(403, { 'content-type': 'application/xml' }).end(`<Error><Code>SignatureDoesNotMatch</Code><Message>${problem}</Message></Error>`);
    const status = failNext.shift();
    if (status) return void res.writeHead(status, { 'content-type': 'application/xml' }).end('<Error><Code>InternalError</Code><Message>try again</Message></Error>');
    const key = decodeURIComponent(url.split('?')[0] as string);
    if (req.method === 'PUT') {
      // S3's conditional writes: If-None-Match: * (only where there is none), If-Match: <ETag>.
      const held = objects.get(key);
      const ifMatch = req.headers['if-match'];
      if ((req.headers['if-none-match'] === '*' && held) || (ifMatch !== undefined && (!held || etagOf(held) !== ifMatch))) {
        return void res
          .writeHead(412, { 'content-type': 'application/xml' })
          .end('<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>');
      }
      objects.set(key, body);
      return void res.writeHead(200, { etag: etagOf(body) }).end();
    }
    if (req.method === 'DELETE') {
      objects.delete(key);
      return void res.writeHead(204).end();
    }
    const found = objects.get(key);
    if (!found) return void res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': found.length, etag: etagOf(found) }).end(found);
  });
  base = server.base;
});
afterAll(() => server.close());
beforeEach(() => {
  seen.length = 0;
  failNext = [];
});

describe('the S3 stand-in checks signatures like AWS', () => {
  it('accepts the SDK S3 client and rejects a wrong secret', async () => {
    const s3 = new S3Client({ region, endpoint: base, forcePathStyle: true, credentials });
    await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'search/t 1/index.bin', Body: new Uint8Array([1, 2, 3]) }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'bkt', Key: 'search/t 1/index.bin' }));
    expect([...((await got.Body?.transformToByteArray()) ?? [])]).toEqual([1, 2, 3]);
    expect(seen.map((s) => s.problem)).toEqual([undefined, undefined]);
    const wrong = new S3Client({ region, endpoint: base, forcePathStyle: true, credentials: { ...credentials, secretAccessKey: 'nope' }, maxAttempts: 1 });
    await expect(wrong.send(new GetObjectCommand({ Bucket: 'bkt', Key: 'search/t 1/index.bin' }))).rejects.toThrow();
    expect(seen.at(-1)?.problem).toBe('signature mismatch');
  });
});

describe('S3 blob store over signed fetch', () => {
  const store = () => new S3BlobStore('bkt', region, { endpoint: `${base}/bkt`, credentials });

  it('puts and gets bytes and text under keys that need escaping; a missing key is undefined', async () => {
    const s = store();
    await s.put('models/t(1)/v 2.bin', new Uint8Array([9, 8, 7]));
    await s.put('search/t1/meta.json', '{"ok":true}');
    expect([...((await s.get('models/t(1)/v 2.bin')) ?? [])]).toEqual([9, 8, 7]);
    expect(new TextDecoder().decode(await s.get('search/t1/meta.json'))).toBe('{"ok":true}');
    expect(await s.get('search/none/index.bin')).toBeUndefined();
    expect(seen.every((x) => x.problem === undefined)).toBe(true);
    expect(seen[0]?.url).toBe('/bkt/models/t%281%29/v%202.bin');
  });

  it('deletes a key (signed), and deleting a missing key is no error', async () => {
    const s = store();
    await s.put('search/t 1/index-1.bin', new Uint8Array([1]));
    await s.delete('search/t 1/index-1.bin');
    expect(await s.get('search/t 1/index-1.bin')).toBeUndefined();
    await s.delete('search/t 1/index-1.bin');
    expect(seen.filter((x) => x.method === 'DELETE').map((x) => [x.url, x.problem])).toEqual([
      ['/bkt/search/t%201/index-1.bin', undefined],
      ['/bkt/search/t%201/index-1.bin', undefined],
    ]);
  });

  it('retries server errors, then gives up with the error code', async () => {
    const s = store();
    await s.put('search/t2/index.bin', 'x');
    failNext = [500, 503];
    expect(new TextDecoder().decode(await s.get('search/t2/index.bin'))).toBe('x');
    failNext = [500, 500, 500];
    await expect(s.get('search/t2/index.bin')).rejects.toMatchObject({ status: 500, code: 'InternalError' });
  });

  it('does not retry or hide a denial', async () => {
    const s = new S3BlobStore('bkt', region, { endpoint: `${base}/bkt`, credentials: { ...credentials, secretAccessKey: 'wrong' } });
    const e = await s.get('search/t2/index.bin').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AwsHttpError);
    expect(e).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(seen).toHaveLength(1);
  });

  it("sends no put or delete once its request's deadline passed (an erasure's rewrite landing after its 503)", async () => {
    const s = store();
    const late = await withinDeadline(20, async () => {
      await new Promise((r) => setTimeout(r, 60));
      return Promise.all([s.put('models/t3/v1.bin', 'x').catch((e: unknown) => e), s.delete('models/t3/v0.bin').catch((e: unknown) => e)]);
    });
    expect(late.map((e) => e instanceof DeadlinePassed)).toEqual([true, true]);
    expect(seen).toEqual([]);
  });

  it('writes conditionally on the ETag it read (If-Match), or on there being none (If-None-Match), and answers false when another write came first', async () => {
    const s = store();
    const key = 'search/t 4/current.json';
    expect(await s.getTagged(key)).toBeUndefined();
    expect(await s.putIfUnchanged(key, '{"builtAt":1}', null)).toBe(true);
    expect(await s.putIfUnchanged(key, '{"builtAt":2}', null)).toBe(false);
    const read = await s.getTagged(key);
    expect(new TextDecoder().decode(read?.body)).toBe('{"builtAt":1}');
    expect(read?.tag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await s.putIfUnchanged(key, '{"builtAt":3}', read?.tag as string)).toBe(true);
    expect(await s.putIfUnchanged(key, '{"builtAt":2}', read?.tag as string)).toBe(false);
    expect(new TextDecoder().decode(await s.get(key))).toBe('{"builtAt":3}');
    // Signed with its condition, and a refusal is not retried.
    const puts = seen.filter((x) => x.method === 'PUT');
    expect(puts.map((x) => x.problem)).toEqual([undefined, undefined, undefined, undefined]);
    expect(puts).toHaveLength(4);
    // Any other failure is retried as a plain write's, then thrown: not taken for a lost race.
    failNext = [500, 500, 500];
    await expect(s.putIfUnchanged(key, 'x', read?.tag as string)).rejects.toMatchObject({ status: 500 });
  });

  it('encodes each key segment once, RFC 3986 style', () => {
    expect(encodeKeyPath("a b/c(d)!*'/é")).toBe('/a%20b/c%28d%29%21%2A%27/%C3%A9');
  });
});
