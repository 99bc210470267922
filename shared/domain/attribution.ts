import { eachAtMost } from '../concurrency.ts';
import type { EventRecord } from './types.ts';

/** Requests whose events one ingest attributes at once. */
const ATTRIBUTION_CONCURRENCY = 16;

/**
 * Attribution at ingest: the stored events that name a served request (by `request_id`, in
 * any case), grouped by it, each group handed to `fn` (the events of one request in order; at most
 * ATTRIBUTION_CONCURRENCY requests at once). Experiment exposures (shared/control/exposures.ts)
 * and search analytics (shared/search/analytics.ts) attribute through it.
 */
export async function eachRequest(events: readonly EventRecord[], fn: (requestId: string, events: EventRecord[]) => Promise<void>): Promise<void> {
  const byRequest = new Map<string, EventRecord[]>();
  for (const e of events) {
    if (typeof e.request_id !== 'string' || e.request_id.length === 0) continue;
    // Request ids are UUIDs, which are one whatever the letters' case (RFC 9562): answers give them in lower case.
    const id = e.request_id.toLowerCase();
    const list = byRequest.get(id);
    if (list) list.push(e);
    else byRequest.set(id, [e]);
  }
  await eachAtMost([...byRequest], ATTRIBUTION_CONCURRENCY, ([requestId, list]) => fn(requestId, list));
}
