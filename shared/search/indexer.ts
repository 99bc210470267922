import type { BlobStore } from '../blob.ts';
import type { ItemStore } from '../domain/types.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { queues } from '../queue/workers.ts';
import { eachAtMost } from '../concurrency.ts';
import { nowSeconds as now } from '../clock.ts';
import { buildIndexParts } from './build.ts';
import { itemText, type EmbeddingProvider } from './embedding.ts';
import { publishBuild, readPointer, type IndexPointer } from './index-store.ts';
import { SEARCH_SETTINGS } from './settings.ts';
import type { SearchDoc } from './types.ts';

export type EmbedOutcome = 'embedded' | 'up-to-date' | 'missing' | 'changed-meanwhile';

/**
 * Embeds an item's current content. Safe for stale and repeated messages: a deleted item or one
 * already embedded at its content version, at the provider's width, is left alone, and the vector
 * is stored only if the content did not change while it was computed (a newer message then does
 * the work). A vector of another width (EMBEDDING_DIMENSIONS changed) is embedded again.
 */
export async function embedItem(items: ItemStore, embedder: EmbeddingProvider, tenant: string, id: number): Promise<EmbedOutcome> {
  const cur = await items.getForEmbedding(tenant, id);
  if (!cur) return 'missing';
  if (cur.embeddedVersion >= cur.contentVersion && cur.dims === embedder.dimensions) return 'up-to-date';
  const [vector] = await embedder.embed([itemText(cur.item)]);
  if (!vector) throw new Error('the embedding provider returned nothing');
  return (await items.saveEmbedding(tenant, id, cur.contentVersion, vector, now())) === 'saved' ? 'embedded' : 'changed-meanwhile';
}

/** Per tenant, the last build this container started or queued (`buildIndex`). */
const builds = new Map<string, Promise<unknown>>();

/**
 * Builds the tenant's index from every item and publishes it (`publishBuild`). Requests queued
 * while another build ran are covered by it and skipped (`requestedAt`). A container builds a
 * tenant's index once at a time: a request waits for the build before it, then is skipped if
 * that build started after the request was made. Under load every maintenance pass asked for a
 * build while one ran, and each started at once: three builds of one catalog ran side by side
 * for five minutes where one takes seconds (a review). `otherWidth`: the items whose stored vector
 * has another width than `dims` (EMBEDDING_DIMENSIONS changed), which the build leaves without
 * one: the caller has them embedded again.
 */
export function buildIndex(items: ItemStore, blobs: BlobStore, dims: number, tenant: string, requestedAt = now()): Promise<IndexPointer & { skipped: boolean; otherWidth: number[] }> {
  // After the build before it, however that one ended.
  const mine = (builds.get(tenant) ?? Promise.resolve()).catch(() => undefined).then(() => buildOnce(items, blobs, dims, tenant, requestedAt));
  builds.set(tenant, mine);
  const forget = () => {
    if (builds.get(tenant) === mine) builds.delete(tenant);
  };
  mine.then(forget, forget);
  return mine;
}

async function buildOnce(items: ItemStore, blobs: BlobStore, dims: number, tenant: string, requestedAt: number): Promise<IndexPointer & { skipped: boolean; otherWidth: number[] }> {
  const current = await readPointer(blobs, tenant);
  if (current && current.builtAt >= requestedAt) return { ...current, skipped: true, otherWidth: [] };
  const builtAt = now();
  const docs: SearchDoc[] = [];
  const otherWidth: { id: number; embeddedAt: number }[] = [];
  await items.forEachPage(tenant, (page) => {
    for (const i of page) {
      docs.push({ ...i, vector: i.vector });
      if (i.vector && i.vector.length !== dims) otherWidth.push({ id: i.id, embeddedAt: i.embedding_updated_at ?? 0 });
    }
  });
  // Waiting for an embedding from here, before the build is published: if the messages the caller
  // sends are lost (a failure after the publish; its redelivery finds the build done and skips it),
  // the sweep sends them again. Until 2026-12-05 such items stayed without a vector until a build.
  if (otherWidth.length) await items.markEmbedPending(tenant, otherWidth, builtAt);
  const { pointer, published } = await publishBuild(blobs, tenant, buildIndexParts(docs, dims, builtAt));
  return { ...pointer, skipped: !published, otherWidth: published ? otherWidth.map((o) => o.id) : [] };
}

/** A message's whole life on the embedding queue: every receive, each a visibility timeout apart. */
export const BACKLOG_GRACE_SECONDS = queues.embedding.visibilityTimeoutSeconds * queues.embedding.maxReceiveCount;
/** Items deferred at once by a pass. */
const DEFERS_AT_ONCE = 25;

/** Where an item re-queued the `n`-th time waits from: due again `grace` * 2^n after `at` (the wait at most a day). */
export const requeueAt = (at: number, grace: number, n: number): number => at + Math.min(grace * (2 ** Math.min(n, 20) - 1), 86_400);

/** The sweep's deps: the catalog, its builds' pointers, the embedding queue. */
export type SweepDeps = { items: ItemStore; blobs: BlobStore; queue: WorkQueue };

/**
 * The periodic maintenance pass: re-queue items whose embedding has been behind for longer than
 * `graceSeconds` (lost or failed messages), and request an index build for tenants whose
 * catalog changed since their index was built. While the embedding queue holds messages (a
 * backlog: a bulk import), only items behind for longer than a message's whole life on it
 * (`BACKLOG_GRACE_SECONDS`): a backlog is not a lost message, and duplicates would only lengthen
 * it. Until 2026-12-05 nothing was re-queued then, and a busy service (any tenant's messages)
 * never re-queued a lost one. Each item re-queued waits twice as long before the next time (at
 * most a day, `requeueAt`), behind the items pending after it: until then the oldest 1,000 were
 * read each pass, so items that never embed (re-queued each pass, dead-lettered each time) kept
 * the others from ever being re-queued. `at`: the pass's time.
 *
 * One tenant at a time (`tenant`, the maintenance pass's loop): the embedding queue's backlog is
 * read once, when the sweeper is made. A tenant's step answers how many embeddings it re-queued
 * and whether it asked for an index build.
 */

export async function embeddingSweeper(deps: SweepDeps, graceSeconds = 60, at = now()) {
  const backlogged = (await deps.queue.backlog('embedding')) > 0;
  const grace = backlogged ? Math.max(graceSeconds, BACKLOG_GRACE_SECONDS) : graceSeconds;
  return {
    backlogged,
    async tenant(tenant: string): Promise<{ requeued: number; rebuild: boolean }> {
      let requeued = 0;
      const stale = await deps.items.pendingEmbeddings(tenant, at - grace, 1000);
      if (stale.length) {
        await deps.queue.send(
          'embedding',
          stale.map(({ id }) => ({ type: 'embed', tenant, item_id: id })),
        );
        await eachAtMost(stale, DEFERS_AT_ONCE, ({ id, since }) => deps.items.deferEmbedding(tenant, id, since, (n) => requeueAt(at, graceSeconds, n)));
        requeued = stale.length;
      }
      const builtAt = (await readPointer(deps.blobs, tenant))?.builtAt ?? 0;
      // Searches score changes since the build beside the index; rebuild when they pile up or age.
      // From the build's own second: a change of that second may have come after the build read the
      // catalog (counted from the next second, such changes were never folded in).
      const count = await deps.items.countChangesSince(tenant, builtAt, SEARCH_SETTINGS.rebuildAfterChanges);
      const rebuild = count >= SEARCH_SETTINGS.rebuildAfterChanges || (count > 0 && at - builtAt >= SEARCH_SETTINGS.maxIndexAgeSeconds);
      if (rebuild) await deps.queue.send('embedding', [{ type: 'build-index', tenant, requested_at: at }]);
      return { requeued, rebuild };
    },
  };
}
