/**
 * The one clock. Everything that needs the current time asks it here, so a test can set the time
 * (`setClock`) instead of waiting for it, and seconds are computed one way everywhere.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

const system: Clock = { nowMs: () => Date.now() };
/** The clock in use: the system's, or a test's (`setClock`). */
let current: Clock = system;

/** Milliseconds since the epoch. */
export const nowMs = (): number => current.nowMs();

/** Whole seconds since the epoch (the unit of every timestamp the API shows). */
export const nowSeconds = (): number => Math.floor(current.nowMs() / 1000);

/** The UTC day (`YYYY-MM-DD`) of a time in Unix seconds. */
export const dayOf = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().slice(0, 10);

/** The first second (Unix) of a UTC day `YYYY-MM-DD`. */
export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 1000;

/**
 * Replaces the clock (tests only); returns a function that restores the previous one.
 * `setClock({ nowMs: () => 1_700_000_000_000 })`.
 */
export function setClock(clock: Clock): () => void {
  const before = current;
  current = clock;
  return () => {
    current = before;
  };
}
