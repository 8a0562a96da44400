import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOneMechanism } from './src/one-mechanism.js';
import { readSourceTree } from './src/source-tree.js';

const repo = join(import.meta.dirname, '..', '..');
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('one definition of each mechanism (issue 18: is-under, bounded output, atomic writer, run-request validation, HTTP helpers, error envelope, argument parser, RISK_LEVELS, TOOL_ERROR_KINDS)', () => {
  it('holds in this repository: a search of the shipped tree finds one definition of each', () => {
    expect(checkOneMechanism(readSourceTree(repo)).map((v) => `${v.file}:${v.line} ${v.message}`)).toEqual([]);
  });

  it('catches a second copy of each, by its name or written out inline', () => {
    const found = checkOneMechanism(readSourceTree(fixture('violations'))).map((v) => `${v.file}:${v.line}`);
    const at = (line: number) => `packages/plugin-tools/src/second-copies.ts:${line}`;
    // isWithin is caught twice on line 2: by its name and by its body
    expect(found.sort()).toEqual([2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map(at).sort());
  });

  it('allows declarations that hand on to the one definition, values named like one, and tests that model one', () => {
    expect(checkOneMechanism(readSourceTree(fixture('clean')))).toEqual([]);
  });
});
