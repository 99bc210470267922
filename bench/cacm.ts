import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { smartRecords, type CranDoc } from './cranfield.ts';

/** Every SMART field of CACM starts a field. */
const ANY_FIELD = /^\.([A-Z])\s*$/;

const flat = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

/**
 * The CACM collection (../shared/data/cacm): 3,204 documents (title, and the abstract when there
 * is one), the 64 queries' `.W` text (the empty `.I 0` record at the end skipped) and the
 * judgments of the 52 judged ones (every listed pair relevant).
 */
export function loadCacm(dir: string) {
  const docs: CranDoc[] = smartRecords(join(dir, 'cacm.all'), ANY_FIELD).map((f) => ({ id: Number(f.get('I')), title: flat(f.get('T')), text: flat(f.get('W')) }));
  const queries = smartRecords(join(dir, 'query.text'), ANY_FIELD)
    .map((f) => ({ n: Number(f.get('I')), text: flat(f.get('W')) }))
    .filter((q) => q.n > 0);
  const qrels = new Map<number, Set<number>>();
  for (const line of readFileSync(join(dir, 'qrels.text'), 'latin1').split(/\r?\n/)) {
    const [q, d] = line.trim().split(/\s+/).map(Number);
    if (!q || !d) continue;
    if (!qrels.has(q)) qrels.set(q, new Set());
    qrels.get(q)?.add(d);
  }
  return { docs, queries, qrels };
}
