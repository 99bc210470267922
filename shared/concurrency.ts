import { setImmediate } from 'node:timers/promises';

/** Runs `fn` over the list in order, with at most `n` calls in flight; resolves when every call has. */
export async function eachAtMost<T>(list: readonly T[], n: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < list.length) await fn(list[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, list.length) }, worker));
}

/**
 * Bytes a copy done in turns copies between two turns (artifact sections, a loaded build's vectors
 * into the kernel's memory): about 10-25 ms each on this machine.
 */
export const BYTES_PER_TURN = 4 * 2 ** 20;

/** The bytes of a typed array (a view of its memory, no copy). */
export const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * Copies `src` into `dst` (from its start) BYTES_PER_TURN bytes at a time, pausing (`yield`)
 * between (run by `runNow` or `runInTurns`, or within another such generator).
 */
export function* copyingBytes(dst: Uint8Array, src: Uint8Array): Generator<void, void, void> {
  for (let at = 0; at < src.length; at += BYTES_PER_TURN) {
    if (at > 0) yield;
    dst.set(src.subarray(at, at + BYTES_PER_TURN), at);
  }
}

/** The next turn of the event loop: what waited for the thread (other requests' I/O and timers) runs first. */
export const nextTurn = (): Promise<void> => setImmediate();

/**
 * Whether `p` settled within `ms` (true; its rejection when it was rejected), or not (false). A
 * rejection after that is handled (by the race). The timer keeps no process alive.
 */
export function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
  });
  return Promise.race([p.then(() => true), late]).finally(() => clearTimeout(timer));
}

/**
 * Long synchronous work written once as a generator that pauses (`yield`) between steps of a few
 * milliseconds: `runNow` runs it to its end at once, `runInTurns` with the thread's other work
 * served at each pause. Both return what it returns.
 */
export function runNow<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

export async function runInTurns<T>(steps: Generator<void, T, void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/**
 * Calls in flight by key: a call for a key whose call is still running shares it (gets its
 * promise), else starts one; the key is let go once its call settles, so a later call starts anew.
 * Bound: one entry per key with a call running.
 */
export class SharedCalls<K, V> {
  readonly #running = new Map<K, Promise<V>>();

  run(key: K, call: () => Promise<V>): Promise<V> {
    const running = this.#running.get(key);
    if (running) return running;
    const p = call();
    this.#running.set(key, p);
    // Let go on either outcome, on a chain of its own: a failure is the callers' to handle (a
    // `finally` here would make a second promise failing with it that nobody awaits).
    const forget = () => {
      if (this.#running.get(key) === p) this.#running.delete(key);
    };
    p.then(forget, forget);
    return p;
  }
}
