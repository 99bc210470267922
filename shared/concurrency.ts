/** Runs `fn` over the list in order, with at most `n` calls in flight; resolves when every call has. */
export async function eachAtMost<T>(list: readonly T[], n: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < list.length) await fn(list[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, list.length) }, worker));
}
