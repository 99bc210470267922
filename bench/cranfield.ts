import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CranDoc {
  id: number;
  title: string;
  text: string;
}

/**
 * SMART records (Cranfield, CACM): `.I n` starts one, a line `.X` of its own starts field X (only
 * the letters of `fields`; other such lines are text). Read as latin-1, CRLF or LF line ends.
 */
export function smartRecords(file: string, fields = /^\.([TABW])\s*$/): Map<string, string>[] {
  return readFileSync(file, 'latin1')
    .replace(/\r\n/g, '\n')
    .split(/^\.I /m)
    .filter((r) => r.trim())
    .map((r) => {
      const lines = r.split('\n');
      const out = new Map<string, string>([['I', (lines[0] as string).trim()]]);
      let cur = '';
      for (const line of lines.slice(1)) {
        const m = fields.exec(line);
        if (m) cur = m[1] as string;
        else if (cur) out.set(cur, `${out.get(cur) ?? ''}${line}\n`);
      }
      return out;
    });
}

export function loadCranfield(dir: string) {
  const docs: CranDoc[] = smartRecords(join(dir, 'cran.all.1400')).map((f) => ({
    id: Number(f.get('I')),
    title: (f.get('T') ?? '').replace(/\s+/g, ' ').trim(),
    text: (f.get('W') ?? '').replace(/\s+/g, ' ').trim(),
  }));
  // Judgments number queries 1..225 by position, not by their .I label.
  const queries = smartRecords(join(dir, 'cran.qry')).map((f, i) => ({ n: i + 1, text: (f.get('W') ?? '').replace(/\s+/g, ' ').trim() }));
  const qrels = new Map<number, Set<number>>();
  for (const line of readFileSync(join(dir, 'cranqrel'), 'latin1').split(/\r?\n/)) {
    const [q, d, rel] = line.trim().split(/\s+/).map(Number);
    if (!q || !d || rel === undefined || Number.isNaN(rel)) continue;
    // Codes 1-4 are relevant (binary); -1 means of no interest.
    if (rel >= 1 && rel <= 4) {
      if (!qrels.has(q)) qrels.set(q, new Set());
      qrels.get(q)?.add(d);
    }
  }
  return { docs, queries, qrels };
}
