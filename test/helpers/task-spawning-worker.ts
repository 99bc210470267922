/**
 * An SQS worker for tests of the local task processes (local/task-spawn.ts): each invocation
 * starts a task process as the training worker does (shared/recs/launcher.ts `spawnTask`), one
 * that lives for the milliseconds its record's body says, and answers its pid as its one failure's id.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { spawnTask } from '../../shared/recs/launcher.ts';

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const ms = Number(event.Records[0]?.body ?? '0');
  const { pid } = await spawnTask(['-e', `setTimeout(() => {}, ${ms})`], { cwd: process.cwd(), env: { ...process.env } });
  return { batchItemFailures: [{ itemIdentifier: String(pid) }] };
}
