import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: process.env.ATRIUM_TEST_REPORT ? ['default', ['json', { outputFile: process.env.ATRIUM_TEST_REPORT }]] : ['default'],
  },
});
