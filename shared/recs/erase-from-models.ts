import type { BlobStore } from '../blob.ts';
import type { ConsoleStore } from '../domain/console-records.ts';
import { erasedFrom } from '../domain/erased-users.ts';
import type { ModelVersion } from '../domain/model-versions.ts';
import { packModel, unpackModel, withoutUsers } from './artifact.ts';

export interface ModelDeps {
  console: ConsoleStore;
  blobs: BlobStore;
}

/** Rounds of `withoutErased` before it gives up on a version others keep writing. */
const REWRITE_ROUNDS = 5;

/**
 * Writes a version's artifact again without every user whose erasure its training read predates
 * (their history rows and iALS vectors), until a read after the write finds none: of two writers
 * at once (two erasures, or an erasure and the run storing this version), the last one's check
 * sees every marker stored before it, so no write of one brings back a user another took out.
 * Answers whether it wrote.
 */
export async function withoutErased(deps: ModelDeps, tenant: string, artifactKey: string): Promise<boolean> {
  let wrote = false;
  for (let round = 0; round < REWRITE_ROUNDS; round++) {
    // The markers first, then the artifact: a marker stored after this read has its own erasure's check to come.
    const markers = (await deps.console.servingConfig(tenant)).erased_user;
    const bytes = await deps.blobs.get(artifactKey);
    const artifact = bytes ? unpackModel(bytes) : undefined;
    const without = artifact?.histories ? withoutUsers(artifact, erasedFrom(markers, artifact.histories.trainedBefore)) : undefined;
    if (!without) return wrote;
    await deps.blobs.put(artifactKey, packModel(without));
    wrote = true;
  }
  throw new Error(`The artifact ${artifactKey} kept changing while erased users were taken out of it; repeat the erasure.`);
}

/**
 * Erasure's part in the stored models: every version after `checkedThrough`, in order, is
 * written again without the erased users its training predates (`withoutErased`), so no version,
 * however old or promoted again later, keeps their history. `progress` hears each version done
 * (the erasure records it, so a call cut off by its time limit goes on from there when repeated,
 * and a later erasure of the user need not read the versions again: a version checked holds
 * none of them, and rewrites only take users out). What a model learned from everyone together
 * (item-item weights, factors) stays until the next run. Answers how many artifacts were rewritten,
 * and whether every version was checked: none is started once `until` (a `performance.now()` time:
 * the maintenance pass's budget, for an erasure it finishes) has passed; the next call checks those
 * left, from the last one heard.
 */
export async function eraseFromModels(
  deps: ModelDeps,
  tenant: string,
  checkedThrough: number,
  progress: (version: number) => Promise<void>,
  until = Number.POSITIVE_INFINITY,
): Promise<{ rewritten: number; finished: boolean }> {
  let rewritten = 0;
  const versions = (await deps.console.list<ModelVersion>(tenant, 'model')).filter((v) => v.id > checkedThrough).sort((a, b) => a.id - b.id);
  for (const version of versions) {
    if (performance.now() >= until) return { rewritten, finished: false };
    if (await withoutErased(deps, tenant, version.artifact)) rewritten++;
    await progress(version.id);
  }
  return { rewritten, finished: true };
}
