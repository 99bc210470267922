import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalQueue, type LocalQueueOptions } from '../../local/queue.ts';
import { sqsWorker } from '../../shared/queue/sqs-worker.ts';

/** A full disk, on demand: the next appends to a file write only part of their text (or none) and fail; truncation may fail too. */
const disk = vi.hoisted(() => ({ full: new Map<string, number>(), truncateFails: false, statFails: new Set<string>() }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  return {
    ...fs,
    appendFileSync: (file: string, data: string) => {
      const left = disk.full.get(file);
      if (left === undefined) return fs.appendFileSync(file, data);
      fs.appendFileSync(file, data.slice(0, left));
      throw enospc();
    },
    writeFileSync: (file: string, data: string) => {
      const left = disk.full.get(file);
      if (left === undefined) return fs.writeFileSync(file, data);
      fs.writeFileSync(file, data.slice(0, left));
      throw enospc();
    },
    statSync: (file: string) => {
      if (disk.statFails.has(file)) throw Object.assign(new Error('EIO: i/o error, stat'), { code: 'EIO' });
      return fs.statSync(file);
    },
    truncateSync: (file: string, len: number) => {
      if (disk.truncateFails) throw Object.assign(new Error('EIO: i/o error, truncate'), { code: 'EIO' });
      return fs.truncateSync(file, len);
    },
  };
});

const dirs: string[] = [];
afterEach(() => {
  disk.full.clear();
  disk.truncateFails = false;
  disk.statFails.clear();
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
    // Both delivered and their outcomes kept (item 2 waiting out its delay): waited for, not slept for.
    await vi.waitFor(() => expect([first.got.length, q.depth]).toEqual([2, 1]), { timeout: 10_000 });
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
      // Received once this run (its receive is on disk before the handler runs); the last run's
      // dead-lettering done (nothing left): waited for, not slept for.
      await vi.waitFor(() => expect([got.length, run < 3 || q.depth === 0]).toEqual([1, true]), { timeout: 10_000 });
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

  it('takes a failed write off the file, so the sends after it are not lost with it', () => {
    const file = journal();
    const q = new LocalQueue('embedding', undefined, opts(file));
    q.send([body(1)]);
    // The disk fills halfway through the next line: the send is refused, and what it wrote goes.
    disk.full.set(file, 20);
    expect(() => q.send([body(2), body(3)])).toThrow(/ENOSPC/);
    disk.full.clear();
    q.send([body(4)]);
    const again = new LocalQueue('embedding', undefined, opts(file));
    expect(again.depth).toBe(2);
    expect(readFileSync(file, 'utf8')).not.toMatch(/item_id\\":2/);
  });

  it('ends a failed write that cannot be taken off with a newline, so the next line stands alone', () => {
    const file = journal();
    const q = new LocalQueue('embedding', undefined, opts(file));
    disk.full.set(file, 20);
    disk.truncateFails = true;
    expect(() => q.send([body(1)])).toThrow(/ENOSPC/);
    disk.full.clear();
    q.send([body(2)]);
    q.send([body(3)]);
    const { got, handler } = recorder();
    const again = new LocalQueue('embedding', handler, opts(file));
    expect(again.depth).toBe(2);
    return again.idle().then(() => expect(got.map((g) => g.id)).toEqual([2, 3]));
  });

  it('does not cut a failed write back to a length it could not read', () => {
    const file = journal();
    const q = new LocalQueue('embedding', undefined, opts(file));
    q.send([body(1), body(2)]);
    disk.statFails.add(file);
    disk.full.set(file, 5);
    expect(() => q.send([body(3)])).toThrow(/ENOSPC/);
    disk.full.clear();
    disk.statFails.clear();
    q.send([body(4)]);
    expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(3);
  });

  it('keeps a message whose dead letter cannot be written, and dead-letters it once the disk has room', async () => {
    const file = journal();
    const dlq = `${file}.dlq`;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { got, handler } = recorder(new Set([5]));
    const q = new LocalQueue('embedding', handler, opts(file, { maxReceiveCount: 1, retryDelayMs: 5, deadLetterFile: dlq }));
    disk.full.set(dlq, 0);
    q.send([body(5)]);
    // Delivered again after its retry delay (a fixed sleep could end before a stalled machine retried).
    await vi.waitFor(() => expect(got.length).toBeGreaterThan(1));
    expect(q.deadLetters).toEqual([]);
    expect(errors).toHaveBeenCalledWith(expect.stringMatching(/dead letter .* not written/));
    disk.full.clear();
    await q.idle();
    errors.mockRestore();
    expect(q.deadLetters.map((d) => JSON.parse(d.body).item_id)).toEqual([5]);
    expect(readFileSync(dlq, 'utf8')).toMatch(/item_id\\":5/);
    expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(0);
  });

  it('writes each dead letter whole, though a full disk cut one short, with or without taking the part back', async () => {
    for (const truncateFails of [false, true]) {
      const file = journal();
      const dlq = `${file}.dlq`;
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      const q = new LocalQueue('embedding', recorder(new Set([5, 6])).handler, opts(file, { maxReceiveCount: 1, retryDelayMs: 5, deadLetterFile: dlq }));
      disk.full.set(dlq, 20);
      disk.truncateFails = truncateFails;
      q.send([body(5)]);
      // Its dead letter cut short by the full disk (logged) before the disk has room again: waited for, not slept for.
      await vi.waitFor(() => expect(errors).toHaveBeenCalledWith(expect.stringMatching(/dead letter .* not written/)), { timeout: 10_000 });
      disk.full.clear();
      disk.truncateFails = false;
      q.send([body(6)]);
      await q.idle();
      errors.mockRestore();
      const lines = readFileSync(dlq, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{') && l.endsWith('}'));
      expect(lines.map((l) => JSON.parse(JSON.parse(l).body).item_id).sort(), `truncate fails: ${truncateFails}`).toEqual([5, 6]);
      expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(0);
    }
  });

  it('starts on a disk too full to rewrite its journal, and keeps what it acknowledges', () => {
    const file = journal();
    new LocalQueue('embedding', undefined, opts(file)).send([body(1)]);
    // A crash cut the last line short, and the disk is full.
    appendFileSync(file, '["s","cut-short",17');
    disk.full.set(`${file}.tmp`, 10);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const q = new LocalQueue('embedding', undefined, opts(file));
    expect(errors).toHaveBeenCalledWith(expect.stringMatching(/ENOSPC/));
    errors.mockRestore();
    expect(existsSync(`${file}.tmp`)).toBe(false);
    disk.full.clear();
    q.send([body(2)]);
    expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(2);
  });

  it('goes on when the disk is too full to rewrite it, and rewrites it later', async () => {
    const file = journal();
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { got, handler } = recorder();
    const q = new LocalQueue('embedding', handler, opts(file));
    disk.full.set(`${file}.tmp`, 100);
    for (let i = 0; i < 12; i++) q.send(Array.from({ length: 1000 }, (_, k) => body(i * 1000 + k)));
    await q.idle();
    expect(got).toHaveLength(12_000);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    expect(errors).toHaveBeenCalledWith(expect.stringMatching(/ENOSPC/));
    disk.full.clear();
    for (let i = 12; i < 30; i++) q.send(Array.from({ length: 1000 }, (_, k) => body(i * 1000 + k)));
    await q.idle();
    errors.mockRestore();
    expect(got).toHaveLength(30_000);
    expect(readFileSync(file, 'utf8').split('\n').length).toBeLessThan(10_000);
    expect(new LocalQueue('embedding', undefined, opts(file)).depth).toBe(0);
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

describe('batches delivered at once to one SQS worker (the embedding queue runs 4 in one thread)', () => {
  it("keep their own failures: one tenant's failing message neither fails another tenant's batch nor is lost in it", async () => {
    // Tenant a's message always fails, quickly; tenant b's succeeds, later, while a's has failed.
    // With one batch processor for the worker, b's batch answered a's failure as its own: it was
    // failed whole (b handled again, then dead-lettered) or, another time, a's failure was lost.
    const handled: string[] = [];
    const handler = sqsWorker(async (job) => {
      if (job.type !== 'embed') return;
      handled.push(job.tenant);
      await new Promise((r) => setTimeout(r, job.tenant === 'a' ? 5 : 30));
      if (job.tenant === 'a') throw new Error('a poison message');
    });
    const q = new LocalQueue('embedding', handler, { batchSize: 1, concurrency: 2, maxReceiveCount: 2, retryDelayMs: 100 });
    q.send([JSON.stringify({ type: 'embed', tenant: 'a', item_id: 1 }), JSON.stringify({ type: 'embed', tenant: 'b', item_id: 1 })]);
    await q.idle();
    expect(handled.filter((t) => t === 'b')).toHaveLength(1);
    expect(handled.filter((t) => t === 'a')).toHaveLength(2);
    expect(q.deadLetters.map((d) => JSON.parse(d.body).tenant)).toEqual(['a']);
  });
});
