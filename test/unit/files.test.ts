import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
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

describe("the local blob store's conditional write (an index pointer two builds may replace at once)", () => {
  it('writes only over the version it was given (none: only where there is none), under a lock it leaves behind no file of', async () => {
    const blobs = new FolderBlobStore(join(dir, 'cas'));
    const key = 'search/t/current.json';
    expect(await blobs.getTagged(key)).toBeUndefined();
    expect(await blobs.putIfUnchanged(key, 'one', null)).toBe(true);
    expect(await blobs.putIfUnchanged(key, 'two', null)).toBe(false);
    const first = await blobs.getTagged(key);
    expect(new TextDecoder().decode(first?.body)).toBe('one');
    expect(await blobs.putIfUnchanged(key, 'two', first?.tag as string)).toBe(true);
    // Another writer came between the read and the write: refused, and the other's write stays.
    expect(await blobs.putIfUnchanged(key, 'three', first?.tag as string)).toBe(false);
    expect(new TextDecoder().decode(await blobs.get(key))).toBe('two');
    expect(readdirSync(join(dir, 'cas', 'search', 't'))).toEqual(['current.json']);
  });

  it('waits for a lock another thread holds, and takes over one a killed process left', async () => {
    const blobs = new FolderBlobStore(join(dir, 'cas-lock'));
    const key = 'search/t/current.json';
    await blobs.put(key, 'one');
    const lock = join(dir, 'cas-lock', 'search', 't', 'current.json.lock');
    writeFileSync(lock, '');
    setTimeout(() => rmSync(lock), 30);
    const tag = (await blobs.getTagged(key))?.tag as string;
    expect(await blobs.putIfUnchanged(key, 'two', tag)).toBe(true);
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(await blobs.putIfUnchanged(key, 'three', (await blobs.getTagged(key))?.tag as string)).toBe(true);
    expect(new TextDecoder().decode(await blobs.get(key))).toBe('three');
    expect(existsSync(lock)).toBe(false);
  });
});
