/**
 * An SQS worker for tests of the local worker threads (local/threaded-handler.ts) whose thread
 * cannot start while RECSEARCH_TEST_FAIL_START is set in the environment it is started with (its
 * module ends the thread as it loads); otherwise it answers as slow-worker.ts (`exit` ends its
 * thread, anything else answers at once with the invocations its thread has seen).
 */
export { handler } from './slow-worker.ts';

if (process.env.RECSEARCH_TEST_FAIL_START) process.exit(1);
