import { cleanupMiddlewares } from '@aws-lambda-powertools/commons';
import { createHash, randomUUID } from 'node:crypto';
import { config } from '../config.ts';
import { idempotencyStore } from '../data/index.ts';
import type { IdempotencyStore } from '../domain/idempotency.ts';
import { Conflict, keyErased } from '../domain/errors.ts';
import { ValidationError } from '../errors.ts';
import { statusOf } from './error-mapping.ts';
import { logger } from '../observability.ts';
import { header, rawBody } from './base.ts';
import { toResult } from './respond.ts';
import type { Flavor, HttpMiddleware, HttpRequest, HttpResult } from './types.ts';
import { nowSeconds } from '../clock.ts';

/** The 409's message for a key whose first request still runs: the Platform envelope's whole error, which the typed client recognises (packages/client/src/transport.ts). */
export const KEY_IN_USE_MESSAGE = 'A request with this Idempotency-Key is still being processed (or was cut off less than 120 s ago); retry shortly.';

/**
 * Stripe-style Idempotency-Key: the first request with a key runs; a retry with the same key
 * and body within the TTL gets the stored response and writes nothing; another body is 409.
 * A request refused before it wrote (4xx) frees its key. One that failed after it may have
 * written (5xx, timeout, or a process that vanished) leaves its key to the retry, which writes
 * the same rows under the same ids (the first id is recorded before any row is written), so a
 * create is stored once however often it is retried. An erasure of a user forgets the answers
 * (and fingerprints) stored under the keys of requests that wrote their events: such a key
 * answers 409 `idempotency_key_erased` until it expires, neither the erased events nor a second
 * write of the request.
 */
export function idempotency(flavor: Flavor, store: () => IdempotencyStore = idempotencyStore): HttpMiddleware {
  return {
    before: async (req) => {
      const key = header(req.event, 'idempotency-key');
      if (key === undefined) return;
      if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
        throw new ValidationError('Invalid Idempotency-Key header.', { 'Idempotency-Key': ['1 to 255 visible ASCII characters.'] });
      }
      // API Gateway (HTTP API, payload 2.0: no multiValueHeaders) hands a header sent more than
      // once as its values joined by commas, and so does `npm start`: `k` sent twice is `k,k`, which a
      // retry sending `k` once would not match, and a key holding a comma cannot be told from it.
      if (key.includes(',')) {
        throw new ValidationError('Invalid Idempotency-Key header.', {
          'Idempotency-Key': ['Sent more than once, or holding a comma (a repeated header arrives as its values joined by commas): send it once, without a comma.'],
        });
      }
      const e = req.event;
      const fingerprint = createHash('sha256')
        .update(`${e.requestContext.http.method} ${e.rawPath}\n${rawBody(e) ?? ''}`)
        .digest('hex');
      const now = nowSeconds();
      // This attempt's name: only while it holds the key may it write, store or drop anything under it.
      const owner = randomUUID();
      const tenant = req.context.state.tenant;
      const claim = await store().claim(tenant, key, fingerprint, owner, now, config().idempotencyTtlSeconds);
      switch (claim.state) {
        case 'new':
        case 'resume':
          req.context.state.idempotencyKey = key;
          req.context.state.idempotencyOwner = owner;
          req.context.state.idPlan = {
            ...(claim.state === 'resume' && claim.firstId !== undefined ? { reuse: claim.firstId } : { reserved: (first: number) => store().reserve(tenant, key, owner, first) }),
            idempotencyKey: key,
          };
          return;
        case 'mismatch':
          throw new Conflict('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
        case 'in_progress':
          throw new Conflict('idempotency_key_in_use', KEY_IN_USE_MESSAGE);
        case 'erased':
          throw keyErased();
        case 'replay': {
          const replay: HttpResult = toResult(flavor, req.context.state.requestId, {
            status: claim.status,
            headers: { 'idempotent-replayed': 'true' },
          });
          // The stored JSON answer, as first sent.
          replay.body = claim.body;
          replay.headers = { ...replay.headers, 'content-type': 'application/json' };
          // middy skips every later step of a response returned early: what they would await
          // (the quota's write, so nothing runs on once Lambda freezes) is awaited here, and
          // Powertools' cleanup (metrics flush, log and trace context) runs, as for a 429.
          await req.context.state.quotaSettled;
          await cleanupMiddlewares(req);
          req.earlyResponse = replay;
          return replay;
        }
      }
    },
    after: async (req) => {
      const { idempotencyKey: key, idempotencyOwner: owner, tenant } = req.context.state;
      const res = req.response;
      if (!key || !owner || !res) return;
      try {
        await store().complete(tenant, key, owner, res.statusCode ?? 200, String(res.body ?? ''), config().idempotencyTtlSeconds);
      } catch (err) {
        // The rows are written: a retry writes them again under the same ids and stores its answer.
        logger.error('idempotency record not completed', { requestId: req.context.state.requestId, error: err as Error });
        await store()
          .fail(tenant, key, owner)
          .catch(() => undefined);
      }
    },
    onError: async (req: HttpRequest) => {
      const { idempotencyKey: key, idempotencyOwner: owner, tenant } = req.context.state;
      if (!key || !owner) return;
      const e = req.error;
      // Refused (4xx): nothing was written, the key is free (unless ids were reserved under it).
      // Anything else may have written.
      const refused = statusOf(e) < 500;
      const settle = refused ? store().release(tenant, key, owner) : store().fail(tenant, key, owner);
      await settle.catch(() => undefined);
    },
  };
}
