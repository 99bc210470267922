import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '../shared/random.ts';
import type { Interaction } from '../shared/recs/dataset.ts';

export interface Movie {
  id: number;
  title: string;
  genres: string[];
}

function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

export function loadMovieLens(dir: string) {
  const movies: Movie[] = readFileSync(join(dir, 'movies.csv'), 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .filter(Boolean)
    .map((l) => {
      const [id, title, genres] = parseCsvLine(l);
      return { id: Number(id), title: title ?? '', genres: (genres ?? '').split('|').filter((g) => g && g !== '(no genres listed)') };
    });
  const ratings: Interaction[] = readFileSync(join(dir, 'ratings.csv'), 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .filter(Boolean)
    .map((l) => {
      const [u, m, , ts] = l.split(',');
      return { user: String(u), item: Number(m), weight: 1, at: Number(ts) };
    });
  return { movies, ratings };
}

/**
 * The protocol of ../shared/data/README.md: each item's ratings split at random 75% train /
 * 25% test (seeded), every rating a positive. Items are taken in id order (MovieLens, as the
 * figures so far) or in order of first appearance (`first`: as the data README's Last.fm figures),
 * each item's rows in file order shuffled by one seeded stream, the first round(0.75 n) to train.
 */
export function splitByItem<T extends Interaction>(ratings: T[], seed = 42, order: 'id' | 'first' = 'id'): { train: T[]; test: T[] } {
  const rand = seededRandom(seed);
  const byItem = new Map<number, T[]>();
  for (const r of ratings) {
    let l = byItem.get(r.item);
    if (!l) byItem.set(r.item, (l = []));
    l.push(r);
  }
  const train: T[] = [];
  const test: T[] = [];
  const items = [...byItem.keys()];
  for (const item of order === 'id' ? items.sort((a, b) => a - b) : items) {
    const l = byItem.get(item) as T[];
    for (let i = l.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [l[i], l[j]] = [l[j] as T, l[i] as T];
    }
    const cut = Math.round(l.length * 0.75);
    train.push(...l.slice(0, cut));
    test.push(...l.slice(cut));
  }
  return { train, test };
}

/** A movie as the API's item: title, genres as the description and in metadata (as bench:recs has always loaded them). */
export function movieItem(m: Movie): { name: string; description: string; metadata: Record<string, string> } {
  return { name: m.title || `Movie ${m.id}`, description: m.genres.join(' '), metadata: { genres: m.genres.join('|') } };
}
