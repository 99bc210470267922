import { GetQueueAttributesCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SqsWorkQueue, workMessageSchema, type WorkMessage } from '../../shared/queue/messages.ts';

type Entry = { Id: string; MessageBody: string };

/** An SQS client that records each SendMessageBatch's entries and refuses, per call, the ids `refuse` names. */
function fakeSqs(refuse: (call: number, entries: Entry[]) => string[] = () => [], attributes?: Record<string, string>) {
  const batches: Entry[][] = [];
  const client = {
    send: async (cmd: unknown) => {
      if (cmd instanceof GetQueueAttributesCommand) return { Attributes: attributes };
      if (!(cmd instanceof SendMessageBatchCommand)) throw new Error('unexpected command');
      const entries = (cmd.input.Entries ?? []) as Entry[];
      batches.push(entries);
      const failed = refuse(batches.length, entries);
      return { Successful: entries.filter((e) => !failed.includes(e.Id)).map((e) => ({ Id: e.Id })), Failed: failed.map((Id) => ({ Id, Code: 'InternalError', SenderFault: false })) };
    },
  };
  return { client: client as unknown as SQSClient, batches };
}

const embeds = (n: number): WorkMessage[] => Array.from({ length: n }, (_, k) => ({ type: 'embed', tenant: 't', item_id: k + 1 }));
const bodies = (entries: Entry[]) => entries.map((e) => (JSON.parse(e.MessageBody) as { item_id: number }).item_id);

describe('SqsWorkQueue: SendMessageBatch', () => {
  it('sends 10 messages per batch, each body the message as JSON, in order', async () => {
    const sqs = fakeSqs();
    await new SqsWorkQueue(sqs.client, { embedding: 'https://sqs/embedding' }).send('embedding', embeds(23));
    expect(sqs.batches.map((b) => b.length)).toEqual([10, 10, 3]);
    expect(sqs.batches.flatMap(bodies)).toEqual(Array.from({ length: 23 }, (_, k) => k + 1));
    expect(JSON.parse((sqs.batches[0] as Entry[])[0]?.MessageBody as string)).toEqual({ type: 'embed', tenant: 't', item_id: 1 });
  });

  it('retries only the entries SQS refused, and ends once none is refused', async () => {
    const sqs = fakeSqs((call) => (call === 1 ? ['3', '7'] : []));
    await new SqsWorkQueue(sqs.client, { embedding: 'u' }).send('embedding', embeds(10));
    expect(sqs.batches.map(bodies)).toEqual([
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      [4, 8],
    ]);
  });

  it('fails after 5 attempts in all when SQS keeps refusing an entry, naming how many and the queue', async () => {
    const sqs = fakeSqs(() => ['1']);
    await expect(new SqsWorkQueue(sqs.client, { training: 'u' }).send('training', embeds(3))).rejects.toThrow('SQS refused 1 messages for training');
    expect(sqs.batches.map(bodies)).toEqual([[1, 2, 3], [2], [2], [2], [2]]);
  });

  it('needs the queue URL: a queue without one fails before anything is sent', async () => {
    const sqs = fakeSqs();
    await expect(new SqsWorkQueue(sqs.client, { embedding: 'u' }).send('training', embeds(1))).rejects.toThrow('QUEUE_URL_TRAINING');
    expect(sqs.batches).toEqual([]);
  });
});

describe('SqsWorkQueue: backlog', () => {
  it('counts messages waiting and being processed; attributes SQS leaves out count 0', async () => {
    const both = fakeSqs(undefined, { ApproximateNumberOfMessages: '4', ApproximateNumberOfMessagesNotVisible: '3' });
    expect(await new SqsWorkQueue(both.client, { embedding: 'u' }).backlog('embedding')).toBe(7);
    const none = fakeSqs(undefined, {});
    expect(await new SqsWorkQueue(none.client, { embedding: 'u' }).backlog('embedding')).toBe(0);
  });
});

describe('work messages on the wire (workMessageSchema)', () => {
  const valid = (m: unknown) => workMessageSchema.safeParse(m).success;
  it('embed: a tenant and a positive integer item id', () => {
    expect(valid({ type: 'embed', tenant: 't', item_id: 1 })).toBe(true);
    for (const item_id of [0, -1, 1.5, '1']) expect(valid({ type: 'embed', tenant: 't', item_id }), String(item_id)).toBe(false);
    expect(valid({ type: 'embed', tenant: '', item_id: 1 })).toBe(false);
  });

  it('build-index: requested_at in whole seconds, 0 included', () => {
    expect(valid({ type: 'build-index', tenant: 't', requested_at: 0 })).toBe(true);
    expect(valid({ type: 'build-index', tenant: 't', requested_at: 1_800_000_000 })).toBe(true);
    for (const requested_at of [-1, 0.5]) expect(valid({ type: 'build-index', tenant: 't', requested_at }), String(requested_at)).toBe(false);
  });

  it('train: names a run (a non-empty job_name); an unknown type is refused', () => {
    expect(valid({ type: 'train', tenant: 't', job_name: 'run-1' })).toBe(true);
    expect(valid({ type: 'train', tenant: 't', job_name: '' })).toBe(false);
    expect(valid({ type: 'reindex', tenant: 't' })).toBe(false);
  });
});
