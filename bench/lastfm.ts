import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Interaction } from '../shared/recs/dataset.ts';

export interface Artist {
  id: number;
  name: string;
  url: string;
  picture: string;
  /** The artist's tags, most used first. */
  tags: string[];
}

/** A user-artist pair: the listener, the artist and the play count. */
export interface Play extends Interaction {
  plays: number;
}

const rows = (text: string) =>
  text
    .split(/\r?\n/)
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('\t'));

/**
 * HetRec 2011 Last.fm (../shared/data/lastfm/README): artists as items (tags from both parts of
 * the assignments joined to tags.dat, most used first), each user_artists.dat row as one `play`
 * (weight 1: every pair is a positive whatever its play count, which is kept as `plays`). No
 * timestamps: `at` is 0.
 */
export function loadLastfm(dir: string): { artists: Artist[]; plays: Play[] } {
  const tagName = new Map(rows(readFileSync(join(dir, 'tags.dat'), 'latin1')).map(([id, v]) => [Number(id), v ?? '']));
  const tagCounts = new Map<number, Map<number, number>>();
  for (const part of ['user_taggedartists.part1.dat', 'user_taggedartists.part2.dat']) {
    for (const [, artist, tag] of rows(readFileSync(join(dir, part), 'latin1'))) {
      const a = Number(artist);
      let m = tagCounts.get(a);
      if (!m) tagCounts.set(a, (m = new Map()));
      m.set(Number(tag), (m.get(Number(tag)) ?? 0) + 1);
    }
  }
  const artists: Artist[] = rows(readFileSync(join(dir, 'artists.dat'), 'utf8')).map(([id, name, url, picture]) => {
    const counts = [...(tagCounts.get(Number(id)) ?? new Map<number, number>())].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return { id: Number(id), name: name ?? '', url: url ?? '', picture: picture ?? '', tags: counts.map(([t]) => tagName.get(t) ?? '').filter(Boolean) };
  });
  const plays: Play[] = rows(readFileSync(join(dir, 'user_artists.dat'), 'utf8')).map(([u, a, w]) => ({ user: String(u), item: Number(a), weight: 1, at: 0, plays: Number(w) }));
  return { artists, plays };
}

/**
 * An artist as the API's item: the name, the 20 most used tags as the description and, with the
 * url and picture, in metadata (the data README's loading; 20 tags keep metadata well under its
 * 16 kB limit).
 */
export function artistItem(a: Artist): { name: string; description: string; metadata: Record<string, string | string[]> } {
  const tags = a.tags.slice(0, 20);
  return { name: a.name || `Artist ${a.id}`, description: tags.join(', '), metadata: { url: a.url, picture: a.picture, tags } };
}
