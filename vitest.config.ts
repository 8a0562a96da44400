import { defineConfig } from 'vitest/config';

// One run covers every package and the architecture guards; each folder is its own project so
// results are grouped by package and a package can be run alone with `--project`.
export default defineConfig({
  test: {
    projects: ['packages/*', 'test/*'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
