/** The index's status (`GET /api/search-index`) and a rebuild on request (`POST /api/search-index/rebuild`). */
import { nowSeconds } from '../clock.ts';
import type { WorkQueue } from '../queue/messages.ts';
import { SEARCH_SETTINGS } from './settings.ts';
import { currentIndex, type SearchDeps } from './views.ts';

/**
 * `GET /api/search-index`: items searchable now, how many are embedded or waiting, and the latest
 * change search reflects. Counted from the index and a keys-only listing of the changes since its
 * build, never from the delta's items: during a bulk import those changes can be the whole
 * catalog, and a status call reads no item data.
 */
export async function indexStatus(deps: SearchDeps, tenant: string) {
  const index = await currentIndex(deps, tenant);
  const since = Math.max(0, index.builtAt - SEARCH_SETTINGS.skewSeconds);
  const [listed, pending] = await Promise.all([deps.items.changeKeysSince(tenant, since), deps.items.pendingCount(tenant)]);
  const changed = new Map(listed.map((c) => [c.id, c]));
  let items = index.docs.length;
  let latest = index.builtAt;
  for (const c of changed.values()) {
    if (index.byId.has(c.id)) items -= 1;
    if (!c.deleted) items += 1;
    latest = Math.max(latest, c.at);
  }
  return {
    items,
    embedded: Math.max(0, items - pending),
    pending,
    updated_at: latest || null,
    index_built_at: index.builtAt || null,
    changes_since_build: changed.size,
  };
}

/** Asks the embedding worker for a new index build now (the sweep does it on its own schedule). */
export async function requestIndexBuild(queue: WorkQueue, tenant: string) {
  const requested_at = nowSeconds();
  await queue.send('embedding', [{ type: 'build-index', tenant, requested_at }]);
  return { status: 'Queued', requested_at };
}
