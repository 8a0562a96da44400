import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// One run covers every package and the architecture guards. Each folder is its own project,
// named after its package (`--project @aalis/core`), and inherits the options below.
const folders = [...readdirSync('packages').map((d) => join('packages', d)), ...readdirSync('test').map((d) => join('test', d))].filter((dir) =>
  existsSync(join(dir, 'package.json')),
);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: folders.map((root) => ({
      extends: true,
      test: { name: (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string }).name, root, include: ['**/*.test.ts'], exclude: ['**/node_modules/**', '**/dist/**', '**/fixtures/**'] },
    })),
  },
});
