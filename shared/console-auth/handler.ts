import type * as z from 'zod/mini';
import { routeFor } from '../routes.ts';
import { httpHandler, type DomainCall, type Options } from '../http/handler.ts';
import type { HttpMiddleware } from '../http/types.ts';
import { requireSession, sessionCaller } from './session.ts';

/** Console routes: the session cookie (with its CSRF token on writes) stands for the caller; never an API key. */
export function sessionAuth(opts: { writes: boolean }): HttpMiddleware {
  return {
    before: async (req) => {
      Object.assign(req.context.state, sessionCaller(await requireSession(req.event, opts)));
    },
  };
}

/** A console route's handler: Platform envelope, session auth. `writes`: only an admin may call it. */
export function consoleHandler<B extends z.ZodMiniType = z.ZodMiniUndefined, Q extends z.ZodMiniType = z.ZodMiniUndefined, P extends z.ZodMiniType = z.ZodMiniUndefined>(
  handlerName: string,
  opts: Options<B, Q, P> & { writes?: boolean },
  fn: DomainCall<B, Q, P>,
) {
  const route = routeFor(handlerName);
  if (route.api !== 'platform' || !route.path.startsWith('/console/')) throw new Error(`${handlerName} is not a console route`);
  const h = httpHandler('platform', sessionAuth({ writes: opts.writes ?? false }), opts, fn);
  h.declared.adminOnly = opts.writes ?? false;
  return h;
}
