import { canonicalJson } from '../canonical-json.ts';
import { nowSeconds } from '../clock.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { logger } from '../observability.ts';
import type { CreateItemsBody, ListItemsQuery, UpdateItemBody } from '../schemas/items.ts';
import { ItemNotFound } from './errors.ts';
import { fitting } from './answer-size.ts';
import { heldAt } from './in-flight.ts';
import { coreList, itemResource, listOf } from './present.ts';
import type { IdPlan, ItemStore } from './types.ts';

/** The clock's (shared/clock.ts), for the modules that took it from here. */
export { nowSeconds };

/**
 * Asks the embedding worker to embed these items. The items already carry their "embedding
 * pending" mark, so if the queue is unreachable the sweep finds them later: nothing is lost.
 */
async function requestEmbeddings(queue: WorkQueue, tenant: string, ids: number[]): Promise<void> {
  try {
    await queue.send(
      'embedding',
      ids.map((item_id) => ({ type: 'embed', tenant, item_id })),
    );
  } catch (e) {
    logger.warn('embedding request not queued; the sweep will pick the items up', { tenant, ids, error: e as Error });
  }
}

/** A single item answers with the item; an array with a list of every created item. */
export async function createItems(store: ItemStore, queue: WorkQueue, tenant: string, body: CreateItemsBody, ids?: IdPlan) {
  const created = await store.create(tenant, Array.isArray(body) ? body : [body], nowSeconds(), ids);
  await requestEmbeddings(
    queue,
    tenant,
    created.map((c) => c.id),
  );
  const resources = created.map(itemResource);
  return Array.isArray(body) ? listOf('/v1/items', resources, false) : resources[0];
}

export async function getItem(store: ItemStore, tenant: string, id: number) {
  const r = await store.get(tenant, id);
  if (!r) throw new ItemNotFound(id);
  return itemResource(r);
}

/**
 * Updates an item. Name, description or metadata sent with the value they already have change
 * nothing (the spec: the embedding is refreshed when one of them changes); `updated_at` moves on
 * every update. A change of any of them (not of `active` alone) re-embeds the item.
 */
export async function updateItem(store: ItemStore, queue: WorkQueue, tenant: string, id: number, patch: UpdateItemBody) {
  // Every field sent is written (the last update wins); whether it changes the content is
  // decided against the item as read, and holds only while no other content change lands first.
  // An update that keeps losing that race (the item's content changing under it, 3 times) is
  // written as a change: the item is embedded again, which its same values would have spared,
  // but the update is never refused.
  for (let attempt = 0; ; attempt++) {
    const current = await store.getForEmbedding(tenant, id);
    if (!current) throw new ItemNotFound(id);
    const { item } = current;
    const changes =
      attempt >= SAME_CONTENT_TRIES ||
      (patch.name !== undefined && patch.name !== item.name) ||
      (patch.description !== undefined && patch.description !== item.description) ||
      (patch.metadata !== undefined && canonicalJson(patch.metadata) !== canonicalJson(item.metadata));
    const r = await store.update(tenant, id, patch, nowSeconds(), changes ? {} : { sameContentAs: current.contentVersion });
    if (!r) {
      if (changes) throw new ItemNotFound(id);
      continue; // deleted, or its content changed meanwhile: read it again
    }
    if (changes) await requestEmbeddings(queue, tenant, [id]);
    return itemResource(r);
  }
}

/** Tries of an update with an item's own values before it is written as a change (`updateItem`). */
const SAME_CONTENT_TRIES = 3;

export async function deleteItem(store: ItemStore, tenant: string, id: number) {
  const started = performance.now();
  if (!(await store.delete(tenant, id, nowSeconds()))) throw new ItemNotFound(id);
  return {
    message: `Item ${id} deleted.`,
    itemId: id,
    deletedCount: 1,
    processing_time_ms: Math.round(performance.now() - started),
  };
}

/**
 * Lists items ascending by id. As the event list does (`heldAt`), a page stops before an id still
 * being written (ids are taken before rows are written), not before deleted ones (their
 * tombstones): until 2026-12-05 a create still writing the lower id of two was passed for good
 * by a client paging on. A filtered page whose read stopped before it filled (the store's bound)
 * ends where the read did: `next_cursor` is there. A page whose items would take more than
 * `ANSWER_BYTES` (answer-size.ts) ends before the first that does not fit, `has_more` and `next_cursor` at the last
 * kept (until 2026-12-06 a page of 100 large items was over Lambda's 6 MB: a 500 on AWS).
 */
export async function listItems(store: ItemStore, tenant: string, q: ListItemsQuery, now = nowSeconds()) {
  const filtered = q.category !== undefined || q.created_after !== undefined || q.created_before !== undefined;
  const page = await store.list(tenant, {
    limit: q.limit,
    ...(q.starting_after !== undefined ? { after: q.starting_after } : {}),
    ...(q.category !== undefined ? { category: q.category } : {}),
    ...(q.created_after !== undefined ? { createdAfter: q.created_after } : {}),
    ...(q.created_before !== undefined ? { createdBefore: q.created_before } : {}),
  });
  const reads = { latest: (n: number, below: number) => store.latestIds(tenant, n, below), deleted: (from: number, to: number, upTo: number) => store.deletedIn(tenant, from, to, upTo) };
  const { keep, held } = await heldAt(page.rows, q.starting_after, filtered, reads, now, page.next);
  const read = page.rows.slice(0, keep).map(itemResource);
  const data = read.slice(0, fitting(read));
  // Cut to fit the answer's bytes: the rest follows from the last item kept, whatever ended the read.
  if (data.length < read.length) return listOf('/v1/items', data, true);
  if (held) return listOf('/v1/items', data, false);
  if (page.next !== undefined) return coreList('/v1/items', data, { hasMore: true, cursor: String(page.next) }, {});
  return listOf('/v1/items', data, page.hasMore);
}
