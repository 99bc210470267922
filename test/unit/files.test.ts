import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replaceFile } from '../../shared/files.ts';
import { FolderBlobStore } from '../../shared/blob.ts';

const dir = mkdtempSync(join(tmpdir(), 'files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('replaceFile', () => {
  it('replaces a file whole, with its mode, and leaves no temporary file', () => {
    const f = join(dir, 'a.json');
    replaceFile(f, 'old');
    replaceFile(f, new Uint8Array([110, 101, 119]), 0o600);
    expect(readFileSync(f, 'utf8')).toBe('new');
    expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it("is how the local blob store writes artifacts: whole, under their key's folder", async () => {
    const blobs = new FolderBlobStore(join(dir, 'blobs'));
    await blobs.put('search/t/index-1.bin', new Uint8Array([1, 2, 3]));
    expect([...((await blobs.get('search/t/index-1.bin')) ?? [])]).toEqual([1, 2, 3]);
    expect(readdirSync(join(dir, 'blobs', 'search', 't'))).toEqual(['index-1.bin']);
  });
});
