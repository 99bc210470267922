import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalQueue, type LocalQueueOptions } from '../../local/queue.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function journal(): string {
  const dir = mkdtempSync(join(tmpdir(), 'local-queue-'));
  dirs.push(dir);
  return join(dir, 'queue-embedding.jsonl');
}
const opts = (journalFile: string, over: Partial<LocalQueueOptions> = {}): LocalQueueOptions => ({ batchSize: 10, maxReceiveCount: 3, retryDelayMs: 60_000, journalFile, ...over });
const body = (n: number) => JSON.stringify({ type: 'embed', tenant: 't', item_id: n });

/** A handler recording what it receives (item id and receive count), failing the ids in `fail`. */
function recorder(fail: Set<number> = new Set()) {
  const got: { id: number; receives: number }[] = [];
  const handler = async (event: SQSEvent) => {
    const failures: { itemIdentifier: string }[] = [];
    for (const r of event.Records) {
      const id = (JSON.parse(r.body) as { item_id: number }).item_id;
      got.push({ id, receives: Number(r.attributes.ApproximateReceiveCount) });
      if (fail.has(id)) failures.push({ itemIdentifier: r.messageId });
    }
    return { batchItemFailures: failures };
  };
  return { got, handler };
}

describe('the local queue keeps what it acknowledged (its journal)', () => {
  it('delivers, after a restart, the messages sent before it and never handled, in send order', async () => {
    const file = journal();
    const before = new LocalQueue('embedding', undefined, opts(file));
    before.send([body(1), body(2)]);
    before.send([body(3)]);
    // The process ends here (nothing closes the queue): a queue made again on the file delivers them.
    const { got, handler } = recorder();
    const after = new LocalQueue('embedding', handler, opts(file));
    expect(after.depth).toBe(3);
    await after.idle();
    expect(got).toEqual([
      { id: 1, receives: 1 },
      { id: 2, receives: 1 },
      { id: 3, receives: 1 },
    ]);
    // Handled: a third start has nothing to deliver.
    expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(0);
  });

  it('keeps a failed message with its receive count, and forgets handled and dead-lettered ones', async () => {
    const file = journal();
    const first = recorder(new Set([2, 3]));
    // Item 3 fails on its only receive (dead-lettered); item 2 waits out its retry delay.
    const q = new LocalQueue('embedding', first.handler, opts(file, { deadLetterFile: `${file}.dlq` }));
    q.send([body(1), body(2)]);
    await new Promise((r) => setTimeout(r, 50));
    const q3 = new LocalQueue('embedding', first.handler, opts(`${file}.other`, { maxReceiveCount: 1 }));
    q3.send([body(3)]);
    await q3.idle();
    expect(first.got.map((g) => g.id)).toEqual([1, 2, 3]);
    q.stop();
    q3.stop();
    const again = recorder();
    const restarted = new LocalQueue('embedding', again.handler, opts(file));
    await restarted.idle();
    expect(again.got).toEqual([{ id: 2, receives: 2 }]);
    expect(new LocalQueue('embedding', undefined, opts(`${file}.other`)).depth).toBe(0);
  });

  it('dead-letters across restarts: receives are counted on disk, so a message no run can handle stops coming back', async () => {
    const file = journal();
    const fail = new Set([9]);
    for (let run = 1; run <= 3; run++) {
      const { got, handler } = recorder(fail);
      const q = new LocalQueue('embedding', handler, opts(file));
      if (run === 1) q.send([body(9)]);
      await new Promise((r) => setTimeout(r, 30));
      q.stop();
      expect(got).toEqual([{ id: 9, receives: run }]);
    }
    const q = new LocalQueue('embedding', undefined, opts(file));
    expect(q.depth).toBe(0);
  });

  it('skips a line a crash cut short, and refuses a send it cannot write', () => {
    const file = journal();
    const q = new LocalQueue('embedding', undefined, opts(file));
    q.send([body(1)]);
    appendFileSync(file, '["s","cut-short",17');
    const again = new LocalQueue('embedding', undefined, opts(file));
    expect(again.depth).toBe(1);
    rmSync(join(file, '..'), { recursive: true, force: true });
    expect(() => again.send([body(2)])).toThrow(/ENOENT/);
    expect(again.depth).toBe(1);
  });

  it('stays about the size of its backlog: rewritten once finished messages outnumber the open ones', async () => {
    const file = journal();
    const { got, handler } = recorder();
    const q = new LocalQueue('embedding', handler, opts(file));
    for (let i = 0; i < 30; i++) q.send(Array.from({ length: 1000 }, (_, k) => body(i * 1000 + k)));
    await q.idle();
    expect(got).toHaveLength(30_000);
    // 30,000 sends, 3,000 receives and 3,000 dones were written; the file holds far fewer lines.
    expect(readFileSync(file, 'utf8').split('\n').length).toBeLessThan(10_000);
    expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(0);
    expect(statSync(file).size).toBe(0);
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });
});
