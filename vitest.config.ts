import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Each run's temporary files in one folder, removed at its end (test/helpers/run-tmpdir.ts).
    globalSetup: ['test/helpers/run-tmpdir.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // DEMO=0: a server a test spawns (bin/server.ts) starts its demo tenant empty; the demo test seeds it itself.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_METRICS_DISABLED: 'true', POWERTOOLS_TRACE_ENABLED: 'false', POWERTOOLS_LOG_LEVEL: 'SILENT', DEMO: '0' },
  },
});
