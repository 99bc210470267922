import type { ErasedUser } from './console-records.ts';

/* Erased users as serving and training read their markers (shared/domain/erasure.ts writes them). */

/**
 * Per erased user, the time (unix seconds) up to which their data no longer personalises: the
 * end of their erasure, or Infinity while it runs.
 */
export function erasedUntil(markers: readonly ErasedUser[]): ReadonlyMap<string, number> {
  return new Map(markers.map((m) => [m.user_id, m.completed_at ?? Infinity]));
}

/**
 * Whether one of an erased user's events (its id, its creation time) was the erasure's: those
 * sent before it began once it has ended (`events_through`); while it runs, or for a marker
 * written before the boundary was kept, every one created up to its end.
 */
export function erasedEvent(m: ErasedUser): (e: { id: number; created: number }) => boolean {
  const through = m.events_through;
  const until = m.completed_at ?? Infinity;
  return through !== undefined && m.completed_at !== null ? (e) => e.id <= through : (e) => e.created <= until;
}

/**
 * Which of an erased user's events are not to be served (the event lists, `GET /v1/events/{id}`):
 * once their erasure has ended, those it covers (`erasedEvent`); while it runs, those up to the
 * bound its sweep's row recorded as it began (`bound`: the events it erases; the user's later ones
 * it keeps, and they are served), or every one where no bound is known (undefined: no row, or one
 * stored before 2026-12-07's bound: `sweepBound`).
 */
export function unservedEvent(m: ErasedUser, bound: number | undefined): (e: { id: number; created: number }) => boolean {
  return m.completed_at === null && bound !== undefined ? (e) => e.id <= bound : erasedEvent(m);
}

/**
 * A user's events without those their erasure covers (`erasedEvent`), in their order: all of
 * them for a user without a marker. What every read of a user's events for serving keeps.
 */
export function withoutErased(m: ErasedUser | undefined): <E extends { id: number; created: number }>(events: readonly E[]) => readonly E[] {
  if (m === undefined) return (events) => events;
  const erased = erasedEvent(m);
  return (events) => events.filter((e) => !erased(e));
}

/** The id after which an erased user's events are theirs again (0: none is known to be, read them all). */
export const eventsAfterErasure = (m: ErasedUser): number => (m.completed_at !== null ? (m.events_through ?? 0) : 0);

/**
 * Whether a model artifact may hold events of a user erased until `until`, from its
 * `trainedBefore` (the trainer reads the events from 60 s after it on): yes unless that read
 * began after the erasure ended.
 */
export const artifactPredatesErasure = (trainedBefore: number, until: number): boolean => trainedBefore < until;

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
