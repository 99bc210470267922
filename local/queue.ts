import { randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { WorkMessage, WorkQueue } from '../shared/queue/messages.ts';
import type { QueueName } from '../shared/queue/workers.ts';
import { lambdaContext } from './http-adapter.ts';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

interface Message {
  id: string;
  body: string;
  receiveCount: number;
  visibleAt: number;
  sentAt: number;
}

export interface LocalQueueOptions {
  batchSize: number;
  maxReceiveCount: number;
  /** Delay before a failed message is visible again (SQS: the visibility timeout). */
  retryDelayMs: number;
  /** Dead letters are appended here as JSON lines, so none is lost. */
  deadLetterFile?: string;
  /**
   * Every message sent is written here before `send` returns, and marked done once handled or
   * dead-lettered: a queue made again on the same file (the stack started after a crash or a
   * kill) delivers what was left, with its receive count, as SQS keeps a message until it is
   * deleted. Without it, messages live in memory only.
   */
  journalFile?: string;
  /** Batches delivered at once (Lambda runs several for a busy queue); default 1. */
  concurrency?: number;
  /**
   * Keep every body sent, in order, for `sent` (tests inspect it). Off by default: a stack that
   * runs for days would keep every message it ever sent (an import of 100,000 items sends as many).
   */
  recordSent?: boolean;
  /** Delivers nothing until `resume()` (messages are taken and journaled meanwhile). */
  held?: boolean;
}

/**
 * The local stand-in for SQS + the Lambda event source: delivers real SQSEvent batches to the
 * worker handler, retries the records it reports in batchItemFailures (or the whole batch when
 * it throws) after a delay, and dead-letters a message after maxReceiveCount receives.
 */
export class LocalQueue {
  /** Visible messages in send order, from `head` on (a deque without O(n) removals). */
  private ready: Message[] = [];
  private head = 0;
  /** Messages waiting out a retry delay. */
  private delayed: Message[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private waiters: (() => void)[] = [];
  readonly deadLetters: { id: string; body: string; receiveCount: number }[] = [];
  /** Every body sent, in order, when `recordSent`. */
  private readonly log: string[] | undefined;
  private readonly journal: QueueJournal | undefined;
  private readonly deadLetterFile: LineFile | undefined;

  constructor(
    readonly name: string,
    private readonly handler: SqsHandler | undefined,
    private readonly opts: LocalQueueOptions,
  ) {
    this.log = opts.recordSent ? [] : undefined;
    this.stopped = opts.held ?? false;
    this.deadLetterFile = opts.deadLetterFile ? new LineFile(opts.deadLetterFile) : undefined;
    if (opts.journalFile) {
      this.journal = new QueueJournal(opts.journalFile);
      const now = Date.now();
      for (const m of this.journal.open.values()) this.ready.push({ ...m, visibleAt: now });
      this.schedule(0);
    }
  }

  /** Every body sent, in order (what tests inspect); only a queue made with `recordSent` keeps them. */
  get sent(): readonly string[] {
    if (!this.log) throw new Error(`Queue ${this.name} keeps the messages sent only when made with recordSent`);
    return this.log;
  }

  send(bodies: string[]): void {
    const now = Date.now();
    const messages = bodies.map((body) => ({ id: randomUUID(), body, receiveCount: 0, visibleAt: now, sentAt: now }));
    // Kept (or refused) before the sender hears it was sent.
    this.journal?.sent(messages);
    this.log?.push(...bodies);
    this.ready.push(...messages);
    this.schedule(0);
  }

  get depth(): number {
    return this.ready.length - this.head + this.delayed.length + this.inFlight;
  }

  /** Resolves once nothing is waiting or in flight (tests, benchmarks). */
  idle(): Promise<void> {
    if (this.depth === 0 || !this.handler) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Resumes delivery after stop(). */
  resume(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Drops every undelivered message, as a lost message would be (tests of the sweep). */
  discardPending(): number {
    const dropped = [...this.ready.slice(this.head), ...this.delayed];
    this.journal?.done(dropped.map((m) => m.id));
    const n = dropped.length;
    this.ready = [];
    this.head = 0;
    this.delayed = [];
    return n;
  }

  /** Up to one batch of visible messages, oldest first. */
  private take(now: number): Message[] {
    if (this.delayed.length) {
      const due = this.delayed.filter((m) => m.visibleAt <= now);
      if (due.length) {
        this.delayed = this.delayed.filter((m) => m.visibleAt > now);
        this.ready.push(...due);
      }
    }
    const batch = this.ready.slice(this.head, this.head + this.opts.batchSize);
    this.head += batch.length;
    if (this.head > 4096 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  private schedule(ms: number): void {
    if (this.stopped || !this.handler || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.pump(), ms);
  }

  private async pump(): Promise<void> {
    this.timer = undefined;
    if (this.running || this.stopped || !this.handler) return;
    this.running = true;
    const deliveries = new Set<Promise<void>>();
    try {
      for (;;) {
        const batch = this.stopped ? [] : this.take(Date.now());
        if (batch.length === 0) {
          // Nothing visible: let the running batches finish (their failures may come back).
          if (deliveries.size === 0) break;
          await Promise.race(deliveries);
          continue;
        }
        this.inFlight += batch.length;
        const d: Promise<void> = this.deliver(batch).finally(() => {
          this.inFlight -= batch.length;
          deliveries.delete(d);
        });
        deliveries.add(d);
        if (deliveries.size >= (this.opts.concurrency ?? 1)) await Promise.race(deliveries);
      }
    } finally {
      this.running = false;
    }
    if (this.delayed.length > 0) {
      const next = Math.min(...this.delayed.map((m) => m.visibleAt));
      this.schedule(Math.max(0, next - Date.now()));
    } else if (this.ready.length > this.head) {
      this.schedule(0);
    } else if (this.inFlight === 0) {
      for (const w of this.waiters.splice(0)) w();
    }
  }

  private async deliver(batch: Message[]): Promise<void> {
    for (const m of batch) m.receiveCount += 1;
    this.journal?.received(batch.map((m) => m.id));
    const event: SQSEvent = { Records: batch.map((m) => this.record(m)) };
    let failed: Set<string>;
    try {
      const res = await (this.handler as SqsHandler)(event, lambdaContext(`worker-${this.name}`, 900_000));
      failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch {
      failed = new Set(batch.map((m) => m.id));
    }
    const done: string[] = [];
    for (const m of batch) {
      if (!failed.has(m.id)) {
        done.push(m.id);
        continue;
      }
      if (m.receiveCount >= this.opts.maxReceiveCount && this.deadLetter(m)) {
        done.push(m.id);
      } else {
        m.visibleAt = Date.now() + this.opts.retryDelayMs * m.receiveCount;
        this.delayed.push(m);
      }
    }
    this.journal?.done(done);
  }

  /**
   * Keeps a message that failed its last receive; false when its dead-letter line cannot be written
   * (a full disk): it then stays in the queue and is tried again, as on SQS a message whose
   * redrive fails is not deleted.
   */
  private deadLetter(m: Message): boolean {
    const file = this.deadLetterFile;
    if (file) {
      try {
        file.append(`${JSON.stringify({ id: m.id, body: m.body, receiveCount: m.receiveCount, at: new Date().toISOString() })}\n`);
      } catch (e) {
        console.error(JSON.stringify({ level: 'ERROR', message: `local queue ${this.name}: dead letter ${m.id} not written to ${file.path}: ${String(e)}; it stays in the queue` }));
        return false;
      }
    }
    this.deadLetters.push({ id: m.id, body: m.body, receiveCount: m.receiveCount });
    return true;
  }

  private record(m: Message): SQSRecord {
    return {
      messageId: m.id,
      receiptHandle: m.id,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(m.sentAt),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.name}`,
      awsRegion: 'local',
    };
  }
}

/** A journal is rewritten with only its open messages once it holds more lines than this. */
const REWRITE_LINES = 10_000;

type Open = Pick<Message, 'id' | 'body' | 'receiveCount' | 'sentAt'>;
/** A journal line: sent (id, time, body), received once more (ids), or done (ids). */
type Line = ['s', string, number, string] | ['r', ...string[]] | ['d', ...string[]];

/**
 * A queue's messages on disk (JSON lines, appended): what is sent, each receive, and what is
 * done. Read back when the queue is made again: the messages not done, in send order. Rewritten
 * with only those when made, and once it holds over 10,000 lines and over four lines per open
 * message (so a long-running stack's file stays about the size of its backlog). A line cut short by
 * a crash is skipped: its write had not returned, so nothing it held was acknowledged; nor can what
 * a failed write left join the next line (`LineFile`).
 */
class QueueJournal {
  readonly open = new Map<string, Open>();
  private lines = 0;
  /** Rewritten once it holds more lines than this (and over four per open message). */
  private rewriteAt = REWRITE_LINES;
  private warned = false;
  private readonly out: LineFile;

  constructor(private readonly file: string) {
    if (existsSync(file)) {
      for (const text of readFileSync(file, 'utf8').split('\n')) {
        const line = parseLine(text);
        if (line) this.apply(line);
      }
    }
    this.out = new LineFile(file);
    try {
      this.rewrite();
    } catch (e) {
      // A full disk: the journal as it stands holds every line (and is appended to).
      this.warn(e);
    }
  }

  sent(messages: readonly Message[]): void {
    this.append(messages.map((m): Line => ['s', m.id, m.sentAt, m.body]));
    for (const m of messages) this.open.set(m.id, { id: m.id, body: m.body, receiveCount: 0, sentAt: m.sentAt });
  }

  received(ids: readonly string[]): void {
    this.settle(['r', ...ids]);
  }

  done(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.settle(['d', ...ids]);
    if (this.lines > this.rewriteAt && this.lines > 4 * this.open.size) {
      try {
        this.rewrite();
      } catch (e) {
        // Only a shorter file is lost: the journal as it stands holds every line. Tried again at twice the lines.
        this.rewriteAt = 2 * this.lines;
        this.warn(e);
      }
    }
  }

  /**
   * A receive or a done that cannot be written (a full disk) is applied in memory only: at worst
   * the message is delivered again after a restart, as SQS may deliver a message twice.
   */
  private settle(line: Line): void {
    this.apply(line);
    try {
      this.append([line]);
    } catch (e) {
      this.warn(e);
    }
  }

  private warn(e: unknown): void {
    if (!this.warned) console.error(JSON.stringify({ level: 'WARN', message: `local queue journal ${this.file}: ${String(e)}; messages may be delivered again after a restart` }));
    this.warned = true;
  }

  private apply(line: Line): void {
    if (line[0] === 's') {
      this.open.set(line[1], { id: line[1], sentAt: line[2], body: line[3], receiveCount: 0 });
      return;
    }
    for (const id of line.slice(1) as string[]) {
      const m = this.open.get(id);
      if (!m) continue;
      if (line[0] === 'd') this.open.delete(id);
      else m.receiveCount += 1;
    }
  }

  private append(lines: readonly Line[]): void {
    this.out.append(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    this.lines += lines.length;
  }

  private rewrite(): void {
    const lines: Line[] = [];
    for (const m of this.open.values()) {
      lines.push(['s', m.id, m.sentAt, m.body]);
      if (m.receiveCount > 0) lines.push(['r', ...Array.from({ length: m.receiveCount }, () => m.id)]);
    }
    const tmp = `${this.file}.tmp`;
    const text = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
    try {
      writeFileSync(tmp, text);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
    renameSync(tmp, this.file);
    this.lines = lines.length;
    this.rewriteAt = REWRITE_LINES;
    this.out.replaced();
  }
}

/**
 * A file of lines, appended to. A write that fails (a full disk) is cut back off the file to the
 * length it had before (truncating frees space), or, when that fails too, the next write starts with
 * a newline: what the failed write left cannot join the next line, which a reader would then skip
 * with it. A file that ends in a line cut short (a crash) is treated the same way.
 */
class LineFile {
  private torn: boolean;

  constructor(readonly path: string) {
    this.torn = !endsLines(path);
  }

  append(text: string): void {
    const before = sizeOf(this.path);
    try {
      appendFileSync(this.path, this.torn ? `\n${text}` : text);
    } catch (e) {
      try {
        // A length that could not be read is no length to cut back to.
        if (before === undefined) throw e;
        truncateSync(this.path, before);
      } catch {
        this.torn = true;
      }
      throw e;
    }
    this.torn = false;
  }

  /** The file was written anew, whole. */
  replaced(): void {
    this.torn = false;
  }
}

/** A file's length: 0 when it does not exist, undefined when it cannot be read. */
function sizeOf(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 0 : undefined;
  }
}

/** Whether a file is absent, empty, or ends with a newline; a file that cannot be read is taken to (its writes will say why). */
function endsLines(file: string): boolean {
  const size = sizeOf(file);
  if (!size) return true;
  try {
    const fd = openSync(file, 'r');
    try {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      return last[0] === 0x0a;
    } finally {
      closeSync(fd);
    }
  } catch {
    return true;
  }
}

function parseLine(text: string): Line | undefined {
  if (text === '') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    if (!Array.isArray(v) || !v.slice(1).every((x, i) => (v[0] === 's' && i === 1 ? typeof x === 'number' : typeof x === 'string'))) return undefined;
    if (v[0] === 's' && v.length === 4) return v as Line;
    if (v[0] === 'r' || v[0] === 'd') return v as Line;
  } catch {
    // A line cut short by a crash.
  }
  return undefined;
}

/** The work queue the handlers see locally: one LocalQueue per queue name. */
export class LocalWorkQueue implements WorkQueue {
  constructor(readonly queues: Map<QueueName, LocalQueue>) {}
  async send(queue: QueueName, messages: WorkMessage[]): Promise<void> {
    const q = this.queues.get(queue);
    if (!q) throw new Error(`No local queue ${queue}`);
    q.send(messages.map((m) => JSON.stringify(m)));
  }
  async backlog(queue: QueueName): Promise<number> {
    return this.queues.get(queue)?.depth ?? 0;
  }
  async idle(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.idle()));
  }
}
