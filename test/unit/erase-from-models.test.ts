import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../shared/blob.ts';
import type { ConsoleStore } from '../../shared/domain/console-records.ts';
import { eraseFromModels } from '../../shared/recs/erase-from-models.ts';

describe("eraseFromModels: erasure's part in the stored models", () => {
  it('checks every version after checkedThrough in ascending order, each heard done before the next (a call cut off goes on from there), and counts only the artifacts it rewrote', async () => {
    // Versions listed out of order; no artifact holds a history (none stored), so nothing is rewritten.
    const console = {
      list: async () => [5, 2, 9, 1, 7].map((id) => ({ id, artifact: `models/t/v${id}.bin` })),
      servingConfig: async () => ({ event_type: [], endpoint: [], erased_user: [] }),
    } as unknown as ConsoleStore;
    const read: string[] = [];
    const blobs = {
      get: async (key: string) => void read.push(key),
      put: async () => {
        throw new Error('nothing to rewrite');
      },
    } as unknown as BlobStore;
    const heard: number[] = [];
    const { rewritten, finished } = await eraseFromModels({ console, blobs }, 't', 2, async (version) => {
      heard.push(version);
      // Heard once its artifact was checked, before the next one is read.
      expect(read.at(-1)).toBe(`models/t/v${version}.bin`);
    });
    expect(heard).toEqual([5, 7, 9]);
    expect(read).toEqual(['models/t/v5.bin', 'models/t/v7.bin', 'models/t/v9.bin']);
    expect(rewritten).toBe(0);
    expect(finished).toBe(true);
  });
});
