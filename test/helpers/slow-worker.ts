/**
 * An SQS worker for tests of the local worker threads (local/threaded-handler.ts): a record whose
 * body is `late <ms> <file>` writes the file after that many milliseconds, then answers; any other
 * answers at once, with the invocations its thread has seen in its one failure's id; `exit` ends
 * its thread (as an error nothing caught would), answering nothing.
 */
import { writeFileSync } from 'node:fs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

let seen = 0;

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  seen += 1;
  const [word, ms, file] = (event.Records[0]?.body ?? '').split(' ');
  if (word === 'exit') process.exit(1);
  if (word === 'late' && file) {
    await new Promise((resolve) => setTimeout(resolve, Number(ms)));
    writeFileSync(file, 'still running');
  }
  return { batchItemFailures: [{ itemIdentifier: `seen ${seen}` }] };
}
