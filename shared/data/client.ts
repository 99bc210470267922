import { DynamoDBClient, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { HttpHandlerOptions, HttpRequest, HttpResponse, RequestHandler } from '@smithy/types';
import { config } from '../config.ts';
import { deadlineSignal } from '../deadline.ts';
import { retryableFailure, signedCalls, type SignedCalls } from './signed.ts';

export interface TableRef {
  /** Everything but `signed`'s operations, through lib-dynamodb's document client. */
  doc: DynamoDBDocumentClient;
  /**
   * GetItem, BatchGetItem, Query, BatchWriteItem and UpdateItem as plain signed requests with the same client's
   * configuration (signed.ts): a sixth of an SDK call's CPU, on the serving path. `getRow`,
   * `queryPage`, `putAll`, `deleteAll` and `update` in ops.ts marshal themselves.
   */
  signed: SignedCalls;
  tableName: string;
}

/** An SDK request handler: takes the signed HTTP request, resolves with the HTTP response. */
export type LocalTransport = RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions>;

/** Per local endpoint, the request handler this thread reaches it with (see useLocalTransport): one per database the local stack runs, never on AWS. */
const localTransports = new Map<string, LocalTransport>();

/**
 * The local stack's threads reach its DynamoDB stand-in at `endpoint` through `handler` (a
 * MessagePort, local/dynamo-port.ts) instead of a loopback socket. Never set on AWS.
 */
export function useLocalTransport(endpoint: string, handler: LocalTransport): void {
  localTransports.set(endpoint, handler);
}

/** Forgets `handler` for `endpoint` (its database closed; the port number may serve another). */
export function dropLocalTransport(endpoint: string, handler: LocalTransport): void {
  if (localTransports.get(endpoint) === handler) localTransports.delete(endpoint);
}

/** The SDK client's HTTP handler (NodeHttpHandler, or the local transport), with the configuration hooks the SDK may call on it. */
interface SdkHandler {
  handle: NodeHttpHandler['handle'];
  metadata?: LocalTransport['metadata'];
  destroy?(): void;
  updateHttpClientConfig?(key: never, value: never): void;
  httpHandlerConfigs?(): object;
}

/**
 * `handler` with the request's deadline (shared/deadline.ts) as the abort signal of each attempt,
 * beside any the call gives: an attempt in flight when the deadline passes is cut there (its
 * connection closed), as the signed calls' are (signed.ts), and the call ends as the deadline's
 * `timeout` (below). Until 2026-12-07 the SDK's calls (PutItem, DeleteItem, TransactWriteItems,
 * ...) gave their handler no signal: the deadline refused only the attempts after it, and one sent
 * to a table that did not answer held its request on (NodeHttpHandler sets no time limit of its
 * own) and could still land after the 503.
 */
function cutAtDeadline(handler: SdkHandler): SdkHandler {
  return joiningSignal(handler, deadlineSignal);
}

/**
 * `handler` with `signalOf()`, when it gives one, as the abort signal of each request beside any
 * the call gives (none of this service's SDK calls gives one; one AbortSignal.any cannot take, not
 * the platform's, would give way to it).
 */
function joiningSignal(handler: SdkHandler, signalOf: () => AbortSignal | undefined): SdkHandler {
  return {
    handle(request, options) {
      const signal = signalOf();
      if (!signal) return handler.handle(request, options);
      const own = options?.abortSignal;
      const abortSignal = own instanceof AbortSignal ? AbortSignal.any([own, signal]) : signal;
      return handler.handle(request, { ...options, abortSignal });
    },
    ...(handler.metadata ? { metadata: handler.metadata } : {}),
    updateHttpClientConfig: (key, value) => handler.updateHttpClientConfig?.(key, value),
    httpHandlerConfigs: () => handler.httpHandlerConfigs?.() ?? {},
    destroy: () => handler.destroy?.(),
  };
}

/**
 * `handler` with `signal` as the abort signal of every request, beside any the call gives: once it
 * fires, a request in flight is cut (its connection closed, or the local port's wait ended) and
 * any later one refused before it is sent (`makeTable`'s `signal`).
 */
function abortingAt(handler: SdkHandler, signal: AbortSignal): SdkHandler {
  const joined = joiningSignal(handler, () => signal);
  return {
    ...joined,
    handle(request, options) {
      if (signal.aborted) {
        const e = new Error('the table was stopped: the request was not sent');
        e.name = 'AbortError';
        return Promise.reject(e);
      }
      return joined.handle(request, options);
    },
  };
}

/**
 * Builds a document client; an explicit endpoint (local stand-in) gets dummy credentials. With
 * `signal` (the local demo seed's stop), every request of both clients is aborted once it fires:
 * in flight or not yet sent.
 */
export function makeTable(tableName: string, endpoint: string | undefined, region: string, opts: { signal?: AbortSignal } = {}): TableRef {
  // One connection pool (or local transport) for both clients: reads and writes share sockets.
  const shared: SdkHandler = (endpoint === undefined ? undefined : localTransports.get(endpoint)) ?? new NodeHttpHandler();
  const requestHandler = opts.signal ? abortingAt(shared, opts.signal) : shared;
  const client = new DynamoDBClient({
    region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 5 } : {}),
    requestHandler: cutAtDeadline(requestHandler),
  });
  // The SDK's logger middleware walks every input and output to redact it for a logger this
  // service never gives it (a no-op logger still gets the walk): a Query of 200 events paid for it.
  client.middlewareStack.remove('loggerMiddleware');
  // Each attempt (inside the retry middleware) is refused once its request's deadline passed (shared/deadline.ts).
  client.middlewareStack.add(
    (next) => (args) => {
      deadlineSignal()?.throwIfAborted();
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'requestDeadline' },
  );
  // Around the retries: a call ending past its request's deadline in a failure that would have been
  // retried (a throttle answered to its last attempt after the deadline passed, or one the retry
  // quota let no retry follow) ends with the deadline's reason, the request's `timeout`, as the
  // signed calls do (signed.ts; until 2026-12-07 the throttle, a 503 `unavailable`); a definite
  // answer (a failed condition) stands. An earlier attempt's throttle already ended so: the next
  // attempt is refused above. So does an attempt the deadline cut in flight (cutAtDeadline: its
  // AbortError, no answer).
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        const deadline = deadlineSignal();
        if (deadline?.aborted && retryableFailure(e, e instanceof DynamoDBServiceException ? e.$metadata.httpStatusCode : undefined)) throw deadline.reason;
        throw e;
      }
    },
    { step: 'build', priority: 'low', name: 'requestDeadlineFailure' },
  );
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { doc, signed: signedCalls(client, requestHandler, endpoint, opts.signal), tableName };
}

/** Cache of one: the container's table client. */
let shared: TableRef | undefined;

/** The container's table, created once at first use (module scope per Lambda container). */
export function table(): TableRef {
  if (!shared) {
    const c = config();
    shared = makeTable(c.tableName, c.dynamodbEndpoint, c.region);
  }
  return shared;
}

/** Closes the table's client (the sockets its reads share). */
export function closeTable(t: TableRef): void {
  t.doc.destroy();
}
