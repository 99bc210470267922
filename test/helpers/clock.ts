import { nowMs } from '../../shared/clock.ts';

/**
 * Waits until the clock's next whole second has begun (and `marginMs` more), by the clock the
 * service stamps with (`nowMs`, shared/clock.ts). For a test whose next write must fall in a later
 * second than the last one (timestamps count whole seconds: `nowSeconds`), where a fixed 1.1 s
 * sleep waited 0.6 s longer on average. Waits again if a timer fired early; never much more than a
 * second by the system's time, so that a clock a test froze (setClock) cannot hold it forever.
 */
export async function nextSecond(marginMs = 5): Promise<void> {
  const next = (Math.floor(nowMs() / 1000) + 1) * 1000 + marginMs;
  const latest = Date.now() + 1000 + marginMs + 100;
  for (let left = next - nowMs(); left > 0 && Date.now() < latest; left = next - nowMs()) await new Promise((r) => setTimeout(r, left));
}
