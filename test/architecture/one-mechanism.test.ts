import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOneMechanism } from './src/one-mechanism.js';
import { readSourceTree } from './src/source-tree.js';

const repo = join(import.meta.dirname, '..', '..');
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('one definition of each mechanism (issue 18: is-under, the kernel realpath, bounded output, atomic writer, run-request validation, HTTP helpers, error envelope, argument parser, RISK_LEVELS, TOOL_ERROR_KINDS)', () => {
  it('holds in this repository: a search of the shipped tree finds one definition of each', () => {
    expect(checkOneMechanism(readSourceTree(repo)).map((v) => `${v.file}:${v.line} ${v.message}`)).toEqual([]);
  });

  it('catches a second copy of each, by its name or written out inline', () => {
    const found = checkOneMechanism(readSourceTree(fixture('violations'))).map((v) => `${v.file}:${v.line}`);
    const at = (line: number) => `packages/plugin-tools/src/second-copies.ts:${line}`;
    // node:fs's JS realpath: called by its name, through the module, renamed; `.native` is not
    const js = [4, 5, 6].map((line) => `packages/plugin-tools/src/js-realpath.ts:${line}`);
    // isWithin is caught twice on line 2: by its name and by its body
    expect(found.sort()).toEqual([...[2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map(at), ...js].sort());
  });

  it('allows declarations that hand on to the one definition, values named like one, and tests that model one', () => {
    expect(checkOneMechanism(readSourceTree(fixture('clean')))).toEqual([]);
  });

  it("has its premise on this node: the JS realpath answers a link where a chain of two ends at a FIFO, the kernel's the FIFO", () => {
    const dir = realpathSync.native(mkdtempSync(join(tmpdir(), 'aalis-realpath-')));
    try {
      execFileSync('mkfifo', [join(dir, 'fifo')]);
      symlinkSync(join(dir, 'fifo'), join(dir, 'second'));
      symlinkSync('second', join(dir, 'first'));
      expect(realpathSync.native(join(dir, 'first'))).toBe(join(dir, 'fifo'));
      // when this starts to fail, node has mended its walk and the rule may go
      expect(realpathSync(join(dir, 'first'))).toBe(join(dir, 'second'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
