import { describe, expect, it } from 'vitest';
import type { TableRef } from '../../shared/data/client.ts';
import { ExperimentUser } from '../../shared/data/entities.ts';
import { dynamoExposureStore, RECORDED_MAX } from '../../shared/data/experiments.ts';

describe('experiment users this container recorded already, past the bound', () => {
  it('the least recently served is let go, not every one: a returning user is not written again while one-off users come and go', { timeout: 120_000 }, async () => {
    // A table that takes every write at once, listing the rows put one at a time (the membership rows).
    const puts: string[] = [];
    const table = {
      tableName: 'fake',
      doc: {
        send: async (cmd: { input: { Item?: Record<string, unknown> } }) => {
          if (cmd.input.Item) puts.push(String(cmd.input.Item.pk));
          return {};
        },
      },
      signed: { updateItem: async () => ({}), batchWriteItem: async () => ({}) },
    } as unknown as TableRef;
    const store = dynamoExposureStore(table);
    const servedAt = 1_700_000_000;
    let n = 0;
    const served = (userId: string) => store.recordExposure('rc', { requestId: `r${n++}`, experimentId: 1, variant: 0, userId, servedAt, windowSeconds: 600 });
    const busyRow = String(ExperimentUser.key({ tenant: 'rc', experiment: 1, user_id: 'returning' }).pk);
    await served('returning');
    // As many one-off users as the container remembers, a thousand at a time, the returning user served after each thousand.
    for (let k = 0; k < RECORDED_MAX; k += 1000) {
      await Promise.all(Array.from({ length: 1000 }, (_, j) => served(`one-off-${k + j}`)));
      await served('returning');
    }
    // Until 2026-12-07 the users recorded were forgotten all at once when full: the returning user's row was written again.
    expect(puts.filter((pk) => pk === busyRow).length).toBe(1);
    // The bound holds: the first one-off user was let go (written again), the latest is remembered.
    const before = puts.length;
    await served(`one-off-${RECORDED_MAX - 1}`);
    expect(puts.length).toBe(before);
    await served('one-off-0');
    expect(puts.length).toBe(before + 1);
  });
});
