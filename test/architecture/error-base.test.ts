import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkErrorClasses } from './src/error-classes.js';
import { readSourceTree } from './src/source-tree.js';

const repo = join(import.meta.dirname, '..', '..');
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('one error base class', () => {
  it("every error class of every package extends core's AalisError, in this repository", () => {
    expect(checkErrorClasses(readSourceTree(repo))).toEqual([]);
  });

  it('catches Error, TypeError and globalThis.Error directly, through a local class, in a class expression, a foreign …Error, and a look-alike base', () => {
    const found = checkErrorClasses(readSourceTree(fixture('violations'))).map((v) => `${v.rule} ${v.file}:${v.line}`);
    expect(found.sort()).toEqual(
      [
        ...[2, 3, 4, 5, 6, 7, 8].map((line) => `error-base packages/plugin-tools/src/errors.ts:${line}`),
        ...[1, 2].map((line) => `error-base packages/plugin-agent/src/own-base.ts:${line}`),
      ].sort(),
    );
  });

  it('allows subclasses of AalisError at any depth, anonymous ones, and classes that are not errors', () => {
    expect(checkErrorClasses(readSourceTree(fixture('clean')))).toEqual([]);
  });
});
