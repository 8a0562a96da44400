import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkImports, checkManifests } from './src/guards.js';
import { readSourceTree } from './src/source-tree.js';

const repo = join(import.meta.dirname, '..', '..');
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const packagesOf = (root: string) => readdirSync(join(root, 'packages'));

describe('the import direction of docs/architecture.md, and backends only through the sandbox service', () => {
  it('holds in this repository: nothing imports to its right or into another package', () => {
    const files = readSourceTree(repo);
    expect(files.length).toBeGreaterThan(20);
    expect(checkImports(repo, files)).toEqual([]);
    expect(checkManifests(repo, packagesOf(repo))).toEqual([]);
  });

  it('catches every kind of violation in the fixture tree', () => {
    const root = fixture('violations');
    const found = checkImports(root, readSourceTree(root)).map((v) => `${v.rule} ${v.file}:${v.line}`);
    expect(found.sort()).toEqual(
      [
        'import-direction packages/core/src/up.ts:2',
        'package-internals packages/cli/src/backend-internals.ts:2',
        'package-internals packages/cli/src/backend-internals.ts:3',
        'package-internals packages/plugin-pod/src/internals.ts:2',
        'package-internals packages/plugin-pod/src/internals.ts:3',
        'package-internals packages/plugin-pod/src/internals.ts:4',
        'package-internals packages/plugin-pod/src/bench-recorder.ts:2',
        'package-internals packages/plugin-pod/src/scratch-user.ts:2',
        'package-internals packages/plugin-pod/bench/elsewhere.ts:2',
        'backend-side-door packages/plugin-pod/src/internals.ts:4',
        'backend-side-door packages/plugin-pod/src/own-backend.ts:2',
        'backend-side-door packages/plugin-tools/src/side-door.ts:2',
        'backend-side-door packages/plugin-tools/src/side-door.ts:3',
        'unknown-package packages/mystery/src/x.ts:2',
      ].sort(),
    );
    expect(checkManifests(root, ['core', 'plugin-pod']).map((v) => v.message)).toEqual([
      "'@aalis/core' depends on '@aalis/api-reach' (dependencies), which is to its right.",
      "'@aalis/plugin-pod' depends on the sandbox backend '@aalis/sandbox-linux' (dependencies); only its tests may (devDependencies): it reaches backends through the `sandbox` service.",
    ]);
  });

  it('leaves allowed imports alone', () => {
    const root = fixture('clean');
    const files = readSourceTree(root);
    // Tests, test helpers and benchmarks bringing a backend along are part of the clean tree.
    expect(files.filter((f) => f.text.includes("'@aalis/sandbox-linux'")).length).toBe(3);
    expect(checkImports(root, files)).toEqual([]);
    expect(checkManifests(root, packagesOf(root))).toEqual([]);
  });
});
