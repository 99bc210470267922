import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * SigV4 as AWS checks it, for the stand-ins of S3 and DynamoDB in tests: its own
 * implementation of the algorithm (node:crypto, written from the AWS documentation, sharing no
 * code with the signer under test). The SDK's own clients pass the same check, which keeps the
 * checker honest.
 */
export const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };
export const region = 'eu-west-1';
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Why the request's signature is wrong, or undefined when it holds. */
export function verifySignature(req: IncomingMessage, body: Buffer, service: string): string | undefined {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(req.headers.authorization ?? '');
  if (!auth) return 'no SigV4 authorization header';
  const [, keyId, date, reg, svc, signedHeaders, signature] = auth as unknown as string[];
  if (keyId !== credentials.accessKeyId || reg !== region || svc !== service) return `bad credential scope ${keyId}/${reg}/${svc}`;
  if (req.headers['x-amz-security-token'] !== credentials.sessionToken) return 'session token missing';
  const names = (signedHeaders as string).split(';');
  if (!names.includes('host')) return 'host not signed';
  const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?');
  // S3 signs the path as sent; other services encode each segment once more.
  const canonicalPath =
    service === 's3'
      ? rawPath
      : rawPath
          .split('/')
          .map((seg) => rfc3986(decodeURIComponent(seg)).replace(/%/g, '%25'))
          .join('/');
  const query = rawQuery.split('&').filter(Boolean).sort().join('&');
  const headers = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const payloadHash = String(req.headers['x-amz-content-sha256'] ?? sha256(body));
  if (service === 's3' && payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body)) return 'x-amz-content-sha256 does not match the body';
  const canonical = [req.method, canonicalPath, query, headers, signedHeaders, payloadHash].join('\n');
  const amzDate = String(req.headers['x-amz-date']);
  const toSign = ['AWS4-HMAC-SHA256', amzDate, `${date}/${reg}/${svc}/aws4_request`, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date as string), reg as string), svc as string), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex') === signature ? undefined : 'signature mismatch';
}
