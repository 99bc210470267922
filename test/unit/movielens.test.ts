import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMovieLens } from '../../bench/movielens.ts';

describe('MovieLens loader (bench)', () => {
  it('reads the CRLF files as published: no carriage return in the last column', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ml-'));
    writeFileSync(join(dir, 'movies.csv'), 'movieId,title,genres\r\n1,Toy Story (1995),Adventure|Animation\r\n2,"Heat, The (1995)",(no genres listed)\r\n');
    writeFileSync(join(dir, 'ratings.csv'), 'userId,movieId,rating,timestamp\r\n7,1,4.0,964982703\r\n');
    const { movies, ratings } = loadMovieLens(dir);
    expect(movies).toEqual([
      { id: 1, title: 'Toy Story (1995)', genres: ['Adventure', 'Animation'] },
      { id: 2, title: 'Heat, The (1995)', genres: [] },
    ]);
    expect(ratings).toEqual([{ user: '7', item: 1, weight: 1, at: 964982703 }]);
  });
});
