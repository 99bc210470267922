/**
 * The index store: where a tenant's index builds (artifacts) and the pointer to the current one
 * are kept in the blob store. The one owner of their keys: the builder publishes through it,
 * searchers read through it.
 */
import * as z from 'zod/mini';
import type { BlobStore } from '../blob.ts';
import { logger } from '../observability.ts';
import { packIndex, unpackIndexInTurns } from './artifact.ts';
import type { IndexParts } from './build.ts';
import { SearchIndex } from './engine.ts';
import { SEARCH_SETTINGS } from './settings.ts';
import { errorMessage } from '../domain/errors.ts';

const pointerKey = (tenant: string) => `search/${tenant}/current.json`;
const artifactKey = (tenant: string, builtAt: number) => `search/${tenant}/index-${builtAt}.bin`;

/**
 * The pointer to a tenant's current build (its `current.json`). `superseded`: earlier builds whose
 * artifacts are still stored, and when a newer build replaced each: search cursors ranked on them
 * page on through them; the builder deletes them once `retainSeconds` have passed since.
 */
const indexPointer = z.object({
  key: z.string(),
  builtAt: z.number(),
  /** The build's item count (not read back: a pointer written without it still names its build). */
  items: z.optional(z.number()),
  superseded: z.optional(z.array(z.object({ key: z.string(), builtAt: z.number(), replacedAt: z.number() }))),
});
export type IndexPointer = z.infer<typeof indexPointer>;

/**
 * The tenant's current pointer, or undefined before the first build, and when it cannot be read (a
 * local stack's file damaged on disk): searches then rank every item as changes since no build,
 * as before the first, and the next build (the sweep asks for one) writes a pointer again. Failing
 * instead made every search, the index status and every build (which reads it first) fail until
 * the file was removed by hand. The builds it listed as replaced are not deleted then.
 */
export async function readPointer(blobs: BlobStore, tenant: string): Promise<IndexPointer | undefined> {
  const raw = await blobs.get(pointerKey(tenant));
  return raw && parsePointer(raw, tenant);
}

function parsePointer(raw: Uint8Array, tenant: string): IndexPointer | undefined {
  try {
    const pointer = z.safeParse(indexPointer, JSON.parse(new TextDecoder().decode(raw)));
    if (pointer.success) return pointer.data;
  } catch {
    // Logged below.
  }
  logger.error('the search index pointer cannot be read; searching without the build until the next one replaces it', { tenant, key: pointerKey(tenant) });
  return undefined;
}

/** The index of a tenant with no build yet (`builtAt` 0). */
export const emptyIndex = (dims: number): SearchIndex => SearchIndex.build([], dims, 0);

/**
 * A build that was read but cannot be decoded by this code: an artifact of a format it does not
 * know (a newer version of the service published it, as during a deploy, while containers of the
 * older code still serve), or a damaged one. Reading it again gives the same answer.
 */
export class UnreadableBuild extends Error {
  constructor(
    readonly key: string,
    cause: unknown,
  ) {
    super(`The index build ${key} cannot be read by this code: ${errorMessage(cause)}`);
  }
}

/**
 * The build stored under `key` (a pointer's), or undefined when there is none; `UnreadableBuild`
 * when it is stored but cannot be decoded (a failed read throws as it failed).
 */
export async function loadBuild(blobs: BlobStore, tenant: string, key: string, dims: number): Promise<SearchIndex | undefined> {
  const bytes = await blobs.get(key);
  if (!bytes) return undefined;
  try {
    const parts = await unpackIndexInTurns(bytes);
    if (parts.dims !== dims) {
      logger.warn('index dimensions differ from the embedding provider; vectors ignored until rebuilt', { tenant, index: parts.dims, provider: dims });
    }
    return await SearchIndex.inTurns(parts, bytes.byteLength);
  } catch (e) {
    throw new UnreadableBuild(key, e);
  }
}

/** The build of time `builtAt`, while it is stored (a cursor's), or undefined. */
export const loadBuildAt = (blobs: BlobStore, tenant: string, builtAt: number, dims: number): Promise<SearchIndex | undefined> => loadBuild(blobs, tenant, artifactKey(tenant, builtAt), dims);

/** How many times a build reads the pointer again when another build replaced it meanwhile. */
const PUBLISH_ATTEMPTS = 5;

/**
 * Publishes a build: artifact first, then the pointer, replaced only if no other build replaced it
 * since it was read (`putIfUnchanged`). Builds of one tenant may run at once in two containers
 * (two build requests, workers at concurrency 10); the last to write its pointer used to win
 * whatever its age, so an older build could replace a newer one, and the newer one's artifact was
 * then listed nowhere and never deleted. Now a build that finds a build of a later second
 * published is not published: its artifact (never served) is deleted and the newer pointer is
 * answered, `published` false. (A build of the same second writes the same artifact key, as
 * before: the later one's replaces it, and its pointer is written.) The build it replaces stays stored for `retainSeconds` (cursors
 * ranked on it page on through it); builds replaced longer ago are deleted.
 */
export async function publishBuild(blobs: BlobStore, tenant: string, parts: IndexParts): Promise<{ pointer: IndexPointer; published: boolean }> {
  const { builtAt } = parts;
  const key = artifactKey(tenant, builtAt);
  await blobs.put(key, packIndex(parts));
  const deleted = new Set<string>();
  for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
    const stored = await blobs.getTagged(pointerKey(tenant));
    const current = stored && parsePointer(stored.body, tenant);
    if (current && current.builtAt > builtAt) {
      await blobs.delete(key).catch((e: unknown) => logger.warn('could not delete an index build a newer one made useless', { tenant, key, error: String(e) }));
      return { pointer: current, published: false };
    }
    // A build of the same second shares the key: this one's artifact replaced it, and the pointer is written again.
    const replaced = current && current.key !== key ? [{ key: current.key, builtAt: current.builtAt, replacedAt: builtAt }] : [];
    const earlier = [...(current?.superseded ?? []), ...replaced];
    // Deleted before the pointer stops listing them; one that could not be deleted stays listed for
    // the next build, and does not hold this one back.
    await Promise.all(
      earlier
        .filter((b) => !deleted.has(b.key) && builtAt - b.replacedAt >= SEARCH_SETTINGS.retainSeconds)
        .map((b) =>
          blobs.delete(b.key).then(
            () => deleted.add(b.key),
            (e: unknown) => logger.warn('could not delete a replaced index build; the next build tries again', { tenant, key: b.key, error: String(e) }),
          ),
        ),
    );
    const superseded = earlier.filter((b) => !deleted.has(b.key));
    const pointer: IndexPointer = { key, builtAt, items: parts.docs.length, ...(superseded.length ? { superseded } : {}) };
    if (await blobs.putIfUnchanged(pointerKey(tenant), JSON.stringify(pointer), stored?.tag ?? null)) return { pointer, published: true };
  }
  throw new Error(`The search index pointer of ${tenant} kept changing while build ${builtAt} was published`);
}
