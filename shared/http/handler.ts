import * as z from 'zod/mini';
import { readOnly, routeFor } from '../routes.ts';
import { baseChain, jsonBody, noBody } from './base.ts';
import { coreAuth, platformAuth, validate, type Schemas } from './middleware.ts';
import { toResult, type Reply } from './respond.ts';
import type { IdPlan } from '../domain/types.ts';
import { withinDeadline } from '../deadline.ts';
import type { ApiContext, Flavor, HttpEvent, HttpMiddleware, HttpResult } from './types.ts';

export interface HandlerInput<B, Q, P> {
  tenant: string;
  body: B;
  query: Q;
  params: P;
  requestId: string;
  event: HttpEvent;
  /** Which ids a create writes under (an Idempotency-Key's retry reuses the first attempt's). */
  idPlan: IdPlan | undefined;
  /**
   * Settles once the caller's credentials are confirmed (at once, unless the route runs while
   * its client record is read: see `overlap` in middleware.ts); rejects if they are not. A
   * read-only route awaits it before it records anything (experiment exposures).
   */
  authorized: Promise<unknown>;
  /** Platform API: the API key's 8-character prefix (the audit trail's actor); undefined on the Core API. */
  actor: string | undefined;
  /** The caller's scopes (Platform API: the API key's, or `admin` for a console admin). */
  scopes: readonly string[];
}

export interface Options<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType> extends Schemas<B, Q, P> {
  /**
   * Honour the Idempotency-Key header: the Core and Platform create routes pass `idempotency`
   * from ./idempotency.ts (its own module, so other bundles leave it out); their route grants the
   * key's record (`idempotent` in routes.ts, CREATE for the Core's).
   */
  idempotency?: (flavor: Flavor) => HttpMiddleware;
  /**
   * Stop the domain call's table calls at the function's time limit (shared/deadline.ts;
   * default true). Core reads, search and recommendations among them, leave it off: what they
   * write late (an analytics row) undoes nothing, and on Lambda the async context it needs costs
   * every promise of the function something.
   */
  deadline?: boolean;
}

export type DomainCall<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType> = (input: HandlerInput<z.output<B>, z.output<Q>, z.output<P>>) => Promise<Reply>;

const noQuery = z.strictObject({});

/**
 * How long before the function's time limit the domain call's writes stop: before middy answers
 * 503 (its `timeoutEarlyInMillis`, 5 ms before the limit), so nothing is written after the answer.
 */
const DEADLINE_MARGIN_MS = 10;

/**
 * What a handler declares about its requests: the schemas it validates them with, and whether it
 * honours Idempotency-Key. The OpenAPI document (shared/openapi/) is generated from these, so it
 * documents exactly what the handlers accept.
 */
export interface DeclaredRequest {
  body: z.ZodMiniType | undefined;
  query: z.ZodMiniType;
  path: z.ZodMiniType | undefined;
  idempotent: boolean;
  /** A console session needs the `admin` role (a viewer's is 403); Platform and console routes only. */
  adminOnly?: boolean;
}

/**
 * Builds a Lambda handler: Powertools, the envelope (its onError turns every error into the
 * flavor's envelope), then auth, JSON body, validation, idempotency, around one domain call.
 */
export function httpHandler<B extends z.ZodMiniType = z.ZodMiniUndefined, Q extends z.ZodMiniType = z.ZodMiniUndefined, P extends z.ZodMiniType = z.ZodMiniUndefined>(
  flavor: Flavor,
  auth: HttpMiddleware | undefined,
  opts: Options<B, Q, P>,
  fn: DomainCall<B, Q, P>,
) {
  const h = baseChain(flavor);
  if (auth) h.use(auth);
  h.use(opts.body ? jsonBody() : noBody());
  // Validation before idempotency: a request refused for its input is refused whatever its key
  // (a replay answered `?x=1` with the first request's answer), and never claims one.
  h.use(validate(opts, noQuery));
  if (opts.idempotency) h.use(opts.idempotency(flavor));
  const declared: DeclaredRequest = { body: opts.body, query: opts.query ?? noQuery, path: opts.path, idempotent: opts.idempotency !== undefined };
  const built = h.handler(async (event: HttpEvent, context: ApiContext): Promise<HttpResult> => {
    const s = context.state;
    // Past middy's answer at the time limit (5 ms before Lambda's), the domain call writes nothing more (shared/deadline.ts).
    const left = opts.deadline === false ? undefined : context.getRemainingTimeInMillis?.();
    const reply = await withinDeadline(left === undefined ? undefined : left - DEADLINE_MARGIN_MS, () =>
      fn({
        tenant: s.tenant,
        body: s.body as z.output<B>,
        query: s.query as z.output<Q>,
        params: s.params as z.output<P>,
        requestId: s.requestId,
        event,
        idPlan: s.idPlan,
        authorized: s.authConfirmed ?? Promise.resolve(),
        actor: s.actor,
        scopes: s.scopes ?? [],
      }),
    );
    return toResult(flavor, s.requestId, reply);
  });
  return Object.assign(built, { declared });
}

/** A Core API handler; its scope comes from the route table. */
export function coreHandler<B extends z.ZodMiniType = z.ZodMiniUndefined, Q extends z.ZodMiniType = z.ZodMiniUndefined, P extends z.ZodMiniType = z.ZodMiniUndefined>(
  handlerName: string,
  opts: Options<B, Q, P>,
  fn: DomainCall<B, Q, P>,
) {
  const route = routeFor(handlerName);
  if (route.api !== 'core' || !route.scope) throw new Error(`${handlerName} is not a Core API route`);
  return httpHandler('core', coreAuth(route.scope, { overlap: readOnly(route) }), { deadline: route.scope === 'service-api/write', ...opts }, fn);
}

/** A Platform API handler; the key scopes it allows come from the route table. */
export function platformHandler<B extends z.ZodMiniType = z.ZodMiniUndefined, Q extends z.ZodMiniType = z.ZodMiniUndefined, P extends z.ZodMiniType = z.ZodMiniUndefined>(
  handlerName: string,
  opts: Options<B, Q, P>,
  fn: DomainCall<B, Q, P>,
) {
  const route = routeFor(handlerName);
  if (route.api !== 'platform') throw new Error(`${handlerName} is not a Platform API route`);
  const h = httpHandler('platform', platformAuth(route.scopes, { readOnly: readOnly(route) }), opts, fn);
  h.declared.adminOnly = !readOnly(route);
  return h;
}

/** One route's handler, with what it declares about its requests (the OpenAPI document reads it). */
export type RouteHandler = ((event: HttpEvent, context: ApiContext) => Promise<HttpResult>) & { declared: DeclaredRequest };

/**
 * One function serving several routes (its `routeHandlers`, by route key `METHOD /path`): the
 * Lambda handler that dispatches each request to its route's handler.
 */
export function byRouteKey(name: string, routeHandlers: Record<string, RouteHandler>): (event: HttpEvent, context: ApiContext) => Promise<HttpResult> {
  return (event, context) => {
    const h = routeHandlers[event.routeKey];
    if (!h) throw new Error(`${name} does not serve ${event.routeKey}`);
    return h(event, context);
  };
}
