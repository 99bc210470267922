/** Similar items for a user: an anchor item's neighbours in each part of the model, tilted by the user's history. */
import { addScaled, BlendModel } from './blend.ts';
import type { History, Model } from './models.ts';

/**
 * Cache: the container's working arrays for one part's scores (the anchor with the history, and
 * the anchor alone), grown to the largest model and reused (read without awaiting).
 * Bound: 8 bytes per item of the largest model served.
 */
const work = { withUser: new Float32Array(0), alone: new Float32Array(0) };
function scratch(key: keyof typeof work, n: number): Float32Array {
  if (work[key].length < n) work[key] = new Float32Array(n);
  return work[key].subarray(0, n);
}

/**
 * The model's scores for an anchor item and a user's history (`h`: the anchor's entries, as in
 * `anchor`, then the user's), so that in every part of the model (each part of a blend, or the
 * model itself) the history moves an item's score by at most its share of the weight (the
 * history's weights over the anchor's: at most 0.3, history.ts) times the anchor's best score in
 * that part. Where the history stays within that, the part scores as the model scores `h`, to
 * the last bit; where it does not, its effect is scaled down to the bound.
 *
 * Weights alone do not bound it: a blend scales each part by its best score, so in a part where
 * the anchor has no neighbours (an item outside EASE's head; an item-kNN item that co-occurs with
 * nothing) the history alone reached the part's full weight, and "similar to item N" listed the
 * user's own recommendations. A part with no signal for the anchor now contributes nothing, and
 * the ranking is the other parts' (as if the blend's weight had moved to them): a user asking for
 * items similar to N expects N's neighbours in their taste, and where a part knows no neighbours
 * of N its idea of the user's taste is no answer to that. With no part knowing any, the model
 * has no candidates, and N's neighbours by content (and then popular items) answer, as for an
 * item the model never saw.
 *
 * With `anchorInto`, the model's scores for the anchor alone are written there too (as
 * `model.score(anchor)` scores them: each part's, scaled as the blend scales them), scored here
 * anyway: the candidates tell the anchor's neighbours from the items only the history brought.
 */
export function scoreSimilar(model: Model, anchor: History, h: History, into: Float32Array, anchorInto?: Float32Array): Float32Array {
  const anchorWeight = sum(anchor.weights);
  const share = anchorWeight > 0 ? Math.max(0, sum(h.weights) - anchorWeight) / anchorWeight : 0;
  const n = model.itemCount;
  if (!(model instanceof BlendModel)) return tilted(model, anchor, h, share, into, anchorInto ?? scratch('alone', n));
  // As BlendModel.score: each part scaled by its own best score, weighted.
  const s = into.fill(0);
  anchorInto?.fill(0);
  model.parts.forEach((m, k) => {
    const w = model.weights[k] as number;
    if (w === 0) return;
    const alone = scratch('alone', n);
    addScaled(s, tilted(m, anchor, h, share, scratch('withUser', n), alone), w);
    if (anchorInto) addScaled(anchorInto, alone, w);
  });
  return s;
}

/**
 * One part's scores for `h` (into `out`), the history's effect (`h`'s scores less the anchor's
 * alone) at most `share` times the anchor's best positive score alone (none positive: no effect).
 */
function tilted(m: Model, anchor: History, h: History, share: number, out: Float32Array, alone: Float32Array): Float32Array {
  const s = m.score(h, out);
  const a = m.score(anchor, alone);
  let best = 0;
  let effect = 0;
  for (let i = 0; i < s.length; i++) {
    const ai = a[i] as number;
    if (ai > best) best = ai;
    const d = Math.abs((s[i] as number) - ai);
    if (d > effect) effect = d;
  }
  const bound = share * best;
  if (effect <= bound) return s;
  const c = bound / effect;
  for (let i = 0; i < s.length; i++) s[i] = (a[i] as number) + c * ((s[i] as number) - (a[i] as number));
  return s;
}

function sum(xs: ArrayLike<number>): number {
  let t = 0;
  for (let k = 0; k < xs.length; k++) t += xs[k] as number;
  return t;
}
