import type { BlobStore } from '../blob.ts';
import type { ConsoleStore } from '../domain/console-records.ts';
import type { ModelVersion } from '../domain/model-versions.ts';
import { packModel, unpackModel, withoutUsers } from './artifact.ts';

/**
 * Erasure's part in the stored models: every version's artifact that holds the user's training
 * history (and their iALS vector) is written again without them, so no version, however old or
 * promoted again later, keeps it. What the model learned from everyone together (item-item
 * weights, factors) stays until the next run. Answers how many artifacts were rewritten; a
 * version rewritten already holds no such row, so a repeated erasure rewrites none.
 */
export async function eraseFromModels(deps: { console: ConsoleStore; blobs: BlobStore }, tenant: string, userId: string): Promise<number> {
  let rewritten = 0;
  for (const version of await deps.console.list<ModelVersion>(tenant, 'model')) {
    const bytes = await deps.blobs.get(version.artifact);
    const without = bytes ? withoutUsers(unpackModel(bytes), (user) => user === userId) : undefined;
    if (!without) continue;
    await deps.blobs.put(version.artifact, packModel(without));
    rewritten++;
  }
  return rewritten;
}
