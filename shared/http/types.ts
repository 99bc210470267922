import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type middy from '@middy/core';
import type { IdPlan } from '../domain/types.ts';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** What the middleware chain learns about a request before the handler runs. */
export interface RequestState {
  requestId: string;
  tenant: string;
  scopes: string[];
  /** Platform API: the API key's 8-character prefix (who made a change, for the audit trail). */
  actor?: string | undefined;
  /** The parsed JSON body (undefined when the route takes none). */
  body: unknown;
  query: unknown;
  params: unknown;
  idempotencyKey: string | undefined;
  /** The attempt's name while it holds the key (see idempotency.ts). */
  idempotencyOwner?: string | undefined;
  /** The ids a create writes under (set with an Idempotency-Key, see idempotency.ts). */
  idPlan?: IdPlan | undefined;
  /**
   * Set while a read-only route runs before its client's record is read back (see coreAuth):
   * settles once it is, rejecting with the 401 if the client is gone.
   */
  authConfirmed?: Promise<unknown>;
  /**
   * Core API: settles once this container's quota bookkeeping for the request is done (a lease
   * claim or a charge runs alongside the request; see quota.ts). Never rejects.
   */
  quotaSettled?: Promise<void>;
}

/** The Lambda context, carrying the request's state from middleware to handler. */
export interface ApiContext extends Context {
  state: RequestState;
}

export type HttpRequest = middy.Request<HttpEvent, HttpResult, Error, ApiContext>;
export type HttpMiddleware = middy.MiddlewareObj<HttpEvent, HttpResult, Error, ApiContext>;

/** Which envelope errors take: Core (`error.type/code/message`), Platform (`error`), OAuth (RFC 6749). */
export type Flavor = 'core' | 'platform' | 'oauth';
