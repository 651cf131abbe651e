import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // The run's temp dir, the test server, and the check that nothing is left after the suite; then each file's own
    // temp dir, and the check that nothing of it is left when it ends (tests/helpers/leftovers.ts).
    globalSetup: ['tests/helpers/global-setup.ts'],
    setupFiles: ['tests/helpers/file-hygiene.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});
