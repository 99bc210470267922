import type { BlobStore } from '../blob.ts';
import { nowSeconds } from '../clock.ts';
import { eraseFromModels } from '../recs/erase-from-models.ts';
import type { ConsoleStore, ErasedUser } from './console-records.ts';
import type { EventStore } from './types.ts';

/*
 * Erasure of a user (DELETE /api/users/{user_id}). Their events are deleted from the table, so
 * no later training reads them; but a model already trained holds their history in its
 * artifact, and serving reads it from there. So the tenant keeps a marker per erased user in
 * the partition serving reads its endpoints and event types from (the same Query): from the
 * moment it is stored, serving personalises that user neither from an artifact trained before
 * the erasure ended nor from events created before it (an index read may still show deleted
 * events for a moment). Events the user sends later personalise as usual.
 */

export async function eraseUser(deps: { console: ConsoleStore; events: EventStore; blobs: BlobStore }, tenant: string, userId: string) {
  const requestedAt = nowSeconds();
  // The marker first: serving stops at once, even if the deletion fails half way (retrying it
  // is safe: an erasure is idempotent), and a run storing its model from now on leaves the user out.
  await deps.console.putErasure(tenant, { user_id: userId, requested_at: requestedAt, completed_at: null });
  const deleted = await deps.events.eraseUser(tenant, userId);
  const rewritten = await eraseFromModels(deps, tenant, userId);
  await deps.console.putErasure(tenant, { user_id: userId, requested_at: requestedAt, completed_at: nowSeconds() });
  return { user_id: userId, deleted_events: deleted, model_versions_rewritten: rewritten };
}

/**
 * The users a model trained from events read from `trainedBefore` on must not hold: those
 * whose erasure had not ended when that read began (`artifactPredatesErasure`).
 */
export function erasedFrom(markers: readonly ErasedUser[], trainedBefore: number): (user: string) => boolean {
  const until = erasedUntil(markers);
  return (user) => {
    const u = until.get(user);
    return u !== undefined && artifactPredatesErasure(trainedBefore, u);
  };
}

/**
 * Per erased user, the time (unix seconds) up to which their data no longer personalises: the
 * end of their erasure, or Infinity while it runs.
 */
export function erasedUntil(markers: readonly ErasedUser[]): ReadonlyMap<string, number> {
  return new Map(markers.map((m) => [m.user_id, m.completed_at ?? Infinity]));
}

/**
 * Whether a model artifact may hold events of a user erased until `until`, from its
 * `trainedBefore` (the trainer reads the events from 60 s after it on): yes unless that read
 * began after the erasure ended.
 */
export const artifactPredatesErasure = (trainedBefore: number, until: number): boolean => trainedBefore < until;
