/**
 * An SQS worker for tests of the local worker threads (local/threaded-handler.ts) whose thread
 * cannot start while RECSEARCH_TEST_FAIL_START is set in the environment it is started with (its
 * module ends the thread as it loads), and that ends on its own RECSEARCH_TEST_EXIT_AFTER_MS after
 * it started when that is set; otherwise it answers as slow-worker.ts (`exit` ends its
 * thread, anything else answers at once with the invocations its thread has seen).
 */
export { handler } from './slow-worker.ts';

if (process.env.RECSEARCH_TEST_FAIL_START) process.exit(1);
// Under RECSEARCH_TEST_EXIT_AFTER_MS the thread starts, then ends on its own that long after.
if (process.env.RECSEARCH_TEST_EXIT_AFTER_MS) setTimeout(() => process.exit(1), Number(process.env.RECSEARCH_TEST_EXIT_AFTER_MS));
