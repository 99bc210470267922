import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CranDoc } from './cranfield.ts';

/** SMART records: `.I n` starts one, `.X` on a line of its own starts a field (ASCII, LF). */
function records(file: string): Map<string, string>[] {
  return readFileSync(file, 'latin1')
    .replace(/\r\n/g, '\n')
    .split(/^\.I /m)
    .filter((r) => r.trim())
    .map((r) => {
      const lines = r.split('\n');
      const fields = new Map<string, string>([['I', (lines[0] as string).trim()]]);
      let cur = '';
      for (const line of lines.slice(1)) {
        const m = /^\.([A-Z])\s*$/.exec(line);
        if (m) cur = m[1] as string;
        else if (cur) fields.set(cur, `${fields.get(cur) ?? ''}${line}\n`);
      }
      return fields;
    });
}

const flat = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

/**
 * The CACM collection (../shared/data/cacm): 3,204 documents (title, and the abstract when there
 * is one), the 64 queries' `.W` text (the empty `.I 0` record at the end skipped) and the
 * judgments of the 52 judged ones (every listed pair relevant).
 */
export function loadCacm(dir: string) {
  const docs: CranDoc[] = records(join(dir, 'cacm.all')).map((f) => ({ id: Number(f.get('I')), title: flat(f.get('T')), text: flat(f.get('W')) }));
  const queries = records(join(dir, 'query.text'))
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
