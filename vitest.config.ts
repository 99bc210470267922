import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Two test files at once at least. Vitest's default is one less than the cores: on a 2-core
    // machine (this project's CI) one file after another, though most files mostly wait (local
    // stacks starting, timers, HTTP). Measured on 2026-12-07 in one clone of f853ffc6, back to back
    // on a quiet 2-core machine: the vitest tier (170 files, 1,858 tests, all passed) took 854 s
    // with one worker (its CI run) and 521 s with two.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Each run's temporary files in one folder, removed at its end (test/helpers/run-tmpdir.ts).
    globalSetup: ['test/helpers/run-tmpdir.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // DEMO=0: a server a test spawns (bin/server.ts) starts its demo tenant empty; the demo test seeds it itself.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true', POWERTOOLS_TRACE_ENABLED: 'false', POWERTOOLS_LOG_LEVEL: 'SILENT', DEMO: '0' },
  },
});
