import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { useTestTmp } from './test/test-tmp.js';

// One run covers every package and the architecture guards. Each folder is its own project,
// named after its package (`--project @aalis/core`), and inherits the options below.
const folders = [...readdirSync('packages').map((d) => join('packages', d)), ...readdirSync('test').map((d) => join('test', d))].filter((dir) =>
  existsSync(join(dir, 'package.json')),
);

// Packages export their built `dist/` (what is published); the `aalis-source` condition points each at
// its TypeScript instead, so tests run from source without a build. Vite resolves the test files'
// imports with it; node children the tests start (`node --import tsx child.ts`) get it through
// NODE_OPTIONS, inherited from this process.
const SOURCE = 'aalis-source';
if (!(process.env.NODE_OPTIONS ?? '').includes(`--conditions=${SOURCE}`)) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --conditions=${SOURCE}`.trim();

// one temp directory for the run, removed as it ends: what a test leaves in TMPDIR goes with it
useTestTmp();

export default defineConfig({
  resolve: { conditions: [SOURCE, 'module', 'node', 'development|production'] },
  ssr: { resolve: { conditions: [SOURCE, 'module', 'node', 'development|production'] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: folders.map((root) => ({
      extends: true,
      test: { name: (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string }).name, root, include: ['**/*.test.ts'], exclude: ['**/node_modules/**', '**/dist/**', '**/fixtures/**'] },
    })),
  },
});
