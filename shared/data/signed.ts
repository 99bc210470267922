import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  InternalServerError,
  InvalidEndpointException,
  ItemCollectionSizeLimitExceededException,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  TransactionConflictException,
  type AttributeValue,
  type BatchGetItemCommandInput,
  type BatchGetItemCommandOutput,
  type BatchWriteItemCommandInput,
  type BatchWriteItemCommandOutput,
  type DynamoDBClient,
  type GetItemCommandInput,
  type GetItemCommandOutput,
  type QueryCommandInput,
  type QueryCommandOutput,
  type UpdateItemCommandInput,
  type UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { createHash, createHmac } from 'node:crypto';
import type { AwsCredentialIdentity, HttpRequest, HttpResponse } from '@smithy/types';
import { awsJsonError } from '../aws/json-error.ts';
import { deadlineSignal } from '../deadline.ts';
import { withRetry } from '../retry.ts';

/**
 * The serving path's calls (GetItem, BatchGetItem, Query, and the writes a serving request makes: BatchWriteItem,
 * UpdateItem) as the plain signed JSON requests they are on the wire: the body DynamoDB's JSON
 * protocol defines, signed with SigV4 (`signRequest`) with the SDK client's own credential chain,
 * region, endpoint rules and HTTP handler (sockets shared with its other calls), and retried as
 * the SDK retries (throttling, 5xx and network failures, with jittered exponential backoff). What
 * it leaves out is the SDK's per-call middleware machinery (schema serde, endpoint resolution,
 * user agent, retry bookkeeping): measured against a canned response, a GetItem costs 0.05 ms of
 * CPU this way and 0.3 ms through the client; profiled at 8 concurrent searches, the two
 * analytics writes of a search through the SDK took a fifth of the serving thread (2026-11-26,
 * docs/benchmarks.md). Answers and errors are the SDK's: binary values as bytes, failures as its
 * exception classes. Every other operation keeps the SDK client.
 */
export interface SignedCalls {
  getItem(input: GetItemCommandInput): Promise<Omit<GetItemCommandOutput, '$metadata'>>;
  query(input: QueryCommandInput): Promise<Omit<QueryCommandOutput, '$metadata'>>;
  batchGetItem(input: BatchGetItemCommandInput): Promise<Omit<BatchGetItemCommandOutput, '$metadata'>>;
  batchWriteItem(input: BatchWriteItemCommandInput): Promise<Omit<BatchWriteItemCommandOutput, '$metadata'>>;
  /** An aborted `signal` ends the call with the handler's abort error, not retried. */
  updateItem(input: UpdateItemCommandInput, signal?: AbortSignal): Promise<Omit<UpdateItemCommandOutput, '$metadata'>>;
}

/** The SDK client's HTTP handler (or the local stack's transport): sends one signed request. */
export interface SignedRequestHandler {
  handle(request: HttpRequest, options?: { abortSignal?: AbortSignal }): Promise<{ response: HttpResponse }>;
}

/** Error codes worth another attempt (the SDK's throttling and transient classes for DynamoDB, and a transaction's conflict). */
const RETRYABLE = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottledException',
  'TooManyRequestsException',
  'LimitExceededException',
  'TransactionInProgressException',
  // A write of an item that an ongoing TransactWriteItems holds (a control record's change and its
  // audit entry: shared/data/console.ts): sent again, it finds the transaction done.
  'TransactionConflictException',
  'InternalServerError',
  'RequestTimeout',
]);
/**
 * Whether `failure` (answered with HTTP `status`, none for a network failure) is worth another
 * attempt: a throttle, a transient or 5xx failure, a failure with no answer. Anything else (a failed
 * condition, a validation error) is a definite answer. The SDK client's calls past their request's
 * deadline are judged by it too (client.ts).
 */
export function retryableFailure(failure: unknown, status: number | undefined): boolean {
  return status === undefined || status >= 500 || RETRYABLE.has(failure instanceof Error ? failure.name : '');
}
/** Codes DynamoDB answers when the request's clock is off. */
const CLOCK_SKEW = new Set(['InvalidSignatureException', 'RequestTimeTooSkewed', 'RequestExpired', 'SignatureDoesNotMatch']);

/** The signed calls of `client` (its region, credentials, endpoint and HTTP handler), `endpoint` if it has one. */
export function signedCalls(client: DynamoDBClient, requestHandler: SignedRequestHandler, endpoint: string | undefined, tableSignal?: AbortSignal): SignedCalls {
  const config = client.config;
  // Resolved once, at the first call: the client's region, endpoint rules and attempts.
  let setup: Promise<{ url: URL; region: string; maxAttempts: number }> | undefined;
  const resolve = async () => {
    const region = await config.region();
    const { url } = config.endpointProvider({
      Region: region,
      UseFIPS: await config.useFipsEndpoint(),
      UseDualStack: await config.useDualstackEndpoint(),
      ...(endpoint ? { Endpoint: endpoint } : {}),
    });
    return { url, region, maxAttempts: Math.max(1, await config.maxAttempts()) };
  };
  let clockOffset = 0;

  async function call<T>(operation: 'GetItem' | 'BatchGetItem' | 'Query' | 'BatchWriteItem' | 'UpdateItem', input: object, callSignal?: AbortSignal): Promise<T> {
    // A request's deadline (shared/deadline.ts) refuses the call, and its retries, once it passed;
    // so does the table's signal (`makeTable`'s: the local demo seed's stop).
    const deadline = deadlineSignal();
    const own = callSignal && deadline ? AbortSignal.any([callSignal, deadline]) : (callSignal ?? deadline);
    const signal = tableSignal && own ? AbortSignal.any([own, tableSignal]) : (own ?? tableSignal);
    const { url, region, maxAttempts } = await (setup ??= resolve().catch((e: unknown) => {
      setup = undefined;
      throw e;
    }));
    const body = JSON.stringify(input, base64Bytes);
    return withRetry<T>({ attempts: maxAttempts, baseMs: 100, maxMs: 20_000, jitter: 'full' }, async () => {
      const request: HttpRequest = {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: {},
        headers: {
          host: url.host,
          'content-type': 'application/x-amz-json-1.0',
          'content-length': String(Buffer.byteLength(body)),
          'x-amz-target': `DynamoDB_20120810.${operation}`,
        },
        body,
      };
      let status: number | undefined;
      let failure: unknown;
      let skewCorrected = false;
      try {
        signal?.throwIfAborted();
        signRequest(request, await config.credentials(), region, new Date(Date.now() + clockOffset));
        const { response } = await requestHandler.handle(request, signal ? { abortSignal: signal } : {});
        status = response.statusCode;
        const text = await bodyText(response);
        if (status === 200) return { value: HAS_BINARY.test(text) ? withBytes(JSON.parse(text) as T) : (JSON.parse(text) as T) };
        const error = errorOf(status, text);
        failure = error;
        // Rejected for this host's clock (over 5 minutes off DynamoDB's): sign with DynamoDB's from now on.
        const serverTime = Date.parse(response.headers.date ?? response.headers.Date ?? '');
        if (CLOCK_SKEW.has(error.name) && Math.abs(serverTime - (Date.now() + clockOffset)) > 300_000) {
          clockOffset = serverTime - Date.now();
          skewCorrected = true;
        }
      } catch (e) {
        // Network failures (reset, refused, timed out) are transient too.
        failure = e;
      }
      const retryable = retryableFailure(failure, status) || skewCorrected;
      // Aborted (the request's deadline passed, or the caller's signal), nothing is sent again: a
      // failure that would have been retried (a throttle answered as the deadline passed, the
      // connection the abort cut) ends the call with the abort's reason, the request's `timeout`
      // (until 2026-12-07 the throttle, a 503 `unavailable` for a load it was never retried
      // through); a definite answer (a failed condition) stands.
      if (signal?.aborted) return { failure: retryable ? signal.reason : failure, retryable: false };
      return { failure, retryable };
    });
  }

  return {
    getItem: (input) => call('GetItem', input),
    query: (input) => call('Query', input),
    batchGetItem: (input) => call('BatchGetItem', input),
    batchWriteItem: (input) => call('BatchWriteItem', input),
    updateItem: (input, signal) => call('UpdateItem', input, signal),
  };
}

/** Cache of one: the latest signing key (it changes daily), the HMAC chain of the secret, date, region, service. */
let signingKey: { secret: string; scope: string; key: Buffer } | undefined;

/**
 * Signs `request` in place with AWS Signature Version 4, as DynamoDB checks it (see
 * docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html): every
 * header it carries is signed; the path is `/` and there is no query string, so neither needs
 * encoding. Its own few lines rather than the SDK's general signer, because it measured so:
 * ≈ 15 vs 70 µs of CPU per request side by side (commit e2e72b8; docs/benchmarks.md, "DynamoDB
 * reads signed by a few lines of SigV4 of their own"), on reads that are a sixth of an SDK
 * call's CPU in all (0.05 vs 0.3 ms per GetItem, commit 64d5c22), two or three per serving
 * request. The SDK's signer pays for header filtering, path escaping and an HMAC of the
 * credentials to look up its key cache. Tests check it against an independent implementation.
 */
export function signRequest(request: HttpRequest, credentials: AwsCredentialIdentity, region: string, at: Date): void {
  const amzDate = at.toISOString().replace(/[-:]|\.\d{3}/g, '');
  const date = amzDate.slice(0, 8);
  const scope = `${date}/${region}/dynamodb/aws4_request`;
  const headers = request.headers;
  headers['x-amz-date'] = amzDate;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  let canonicalHeaders = '';
  for (const name of names) canonicalHeaders += `${name}:${String(headers[name]).trim().replace(/\s+/g, ' ')}\n`;
  const signedHeaders = names.join(';');
  const payloadHash = createHash('sha256')
    .update(request.body as string)
    .digest('hex');
  const canonical = `${request.method}\n${request.path}\n\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const toSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${createHash('sha256').update(canonical).digest('hex')}`;
  if (signingKey?.secret !== credentials.secretAccessKey || signingKey.scope !== scope) {
    const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
    signingKey = { secret: credentials.secretAccessKey, scope, key: hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date), region), 'dynamodb'), 'aws4_request') };
  }
  const signature = createHmac('sha256', signingKey.key).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

/** The response body as text (a Node stream from the HTTP handler, bytes from the local transport). */
async function bodyText(response: HttpResponse): Promise<string> {
  const body: unknown = response.body;
  if (body === undefined || body === null) return '';
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (typeof body === 'string') return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The errors these operations document, as the SDK's classes; any other code keeps its name. */
const KNOWN = {
  ConditionalCheckFailedException,
  InternalServerError,
  InvalidEndpointException,
  ItemCollectionSizeLimitExceededException,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
  TransactionConflictException,
};

/** DynamoDB's JSON error body: `{"__type": "com.amazonaws.dynamodb.v20120810#Code", "message": ...}`. */
function errorOf(status: number, text: string): DynamoDBServiceException {
  // Not JSON (a proxy's answer): the status speaks for it.
  const body = awsJsonError(text);
  const code = body?.code || `Http${status}`;
  const $metadata = { httpStatusCode: status };
  const message = body?.message || `DynamoDB answered HTTP ${status}`;
  const Known = Object.hasOwn(KNOWN, code) ? KNOWN[code as keyof typeof KNOWN] : undefined;
  return Known ? new Known({ message, $metadata }) : new DynamoDBServiceException({ name: code, $fault: status >= 500 ? 'server' : 'client', $metadata, message });
}

/**
 * Binary values travel base64-encoded in the JSON; the SDK takes and hands over bytes, and so do
 * these calls. Only answers that hold one (an item's vector, a stored response body) are walked.
 */
const HAS_BINARY = /"BS?":/;

/** JSON.stringify's replacer: bytes (a Uint8Array or Buffer, seen on the holder before toJSON) as base64. */
function base64Bytes(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Uint8Array ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') : value;
}

type AttributeMap = Record<string, AttributeValue>;

function withBytes<T>(out: T): T {
  const o = out as {
    Item?: AttributeMap;
    Items?: AttributeMap[];
    LastEvaluatedKey?: AttributeMap;
    Attributes?: AttributeMap;
    UnprocessedItems?: Record<string, { PutRequest?: { Item?: AttributeMap }; DeleteRequest?: { Key?: AttributeMap } }[]>;
  };
  const unprocessed = Object.values(o.UnprocessedItems ?? {}).flatMap((rs) => rs.flatMap((r) => [r.PutRequest?.Item, r.DeleteRequest?.Key]));
  for (const row of [o.Item, o.LastEvaluatedKey, o.Attributes, ...(o.Items ?? []), ...unprocessed]) if (row) for (const k in row) row[k] = decodeBinary(row[k] as AttributeValue);
  return out;
}

function decodeBinary(v: AttributeValue): AttributeValue {
  const b64 = (s: unknown) => new Uint8Array(Buffer.from(s as string, 'base64'));
  if (v.B !== undefined) return { B: b64(v.B) };
  if (v.BS !== undefined) return { BS: v.BS.map(b64) };
  if (v.L !== undefined) return { L: v.L.map(decodeBinary) };
  if (v.M !== undefined) {
    for (const k in v.M) v.M[k] = decodeBinary(v.M[k] as AttributeValue);
  }
  return v;
}
