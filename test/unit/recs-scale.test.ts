import { describe, expect, it } from 'vitest';
import { sampleUsers, topK } from '../../shared/recs/evaluate.ts';
import { blendTop10, maskedTop } from '../../shared/recs/tuning.ts';
import { seededRandom } from '../../shared/random.ts';

describe('validation at scale ranks exactly as before', () => {
  const rand = seededRandom(5);
  // Coarse values, so ties (broken by index) are common.
  const scores = (n: number) => Float32Array.from({ length: n }, () => Math.round(rand() * 40) / 8 - 1);

  it('maskedTop is topK with a mask', () => {
    for (let t = 0; t < 50; t++) {
      const n = 5 + Math.floor(rand() * 300);
      const s = scores(n);
      const mask = Uint8Array.from({ length: n }, () => (rand() < 0.3 ? 1 : 0));
      const set = new Set([...mask.keys()].filter((i) => mask[i] === 1));
      expect(maskedTop(s, 10, mask)).toEqual(topK(s, 10, set));
    }
  });

  it('blendTop10 is topK over the blend written to a Float32Array', () => {
    for (let t = 0; t < 50; t++) {
      const n = 5 + Math.floor(rand() * 300);
      const e = scores(n);
      const a = scores(n);
      const mask = Uint8Array.from({ length: n }, () => (rand() < 0.3 ? 1 : 0));
      const set = new Set([...mask.keys()].filter((i) => mask[i] === 1));
      const bound = [...new Set([...maskedTop(e, 10, mask), ...maskedTop(a, 10, mask)])];
      for (const w of [0, 0.1, 0.5, 0.9, 1]) {
        const ce = (1 - w) * 0.7;
        const ca = w * 1.3;
        const mixed = Float32Array.from(e, (x, i) => ce * x + ca * (a[i] as number));
        expect(blendTop10(ce, e, ca, a, mask, bound)).toEqual(topK(mixed, 10, set));
      }
    }
  });

  it('sampleUsers keeps every user up to the cap, a seeded sample in order beyond', () => {
    const rel = new Map(Array.from({ length: 50 }, (_, u) => [u * 2, new Set([u])]));
    expect(sampleUsers(rel, 50)).toBe(rel);
    const s = sampleUsers(rel, 20);
    expect(s.size).toBe(20);
    expect([...s.keys()]).toEqual([...s.keys()].sort((x, y) => x - y));
    expect([...sampleUsers(rel, 20).keys()]).toEqual([...s.keys()]);
    // A sample of all of them, not the first 20 (nor those of another seed).
    expect([...s.keys()]).not.toEqual([...rel.keys()].slice(0, 20));
    expect(Math.max(...s.keys())).toBeGreaterThan(40);
    expect([...sampleUsers(rel, 20, 7).keys()]).not.toEqual([...s.keys()]);
  });
});
