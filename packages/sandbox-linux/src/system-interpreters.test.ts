import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findPerl, findPython } from './system-interpreters.js';
import { TreeIndex } from './tree-index.js';

// The host-side helpers (root map, tree index) run python3 as the daemon's user, root included:
// a shim script first on PATH (pyenv puts one there on this machine kind) must never be taken.
const dir = mkdtempSync(join(tmpdir(), 'aalis-python-'));
const shim = join(dir, 'python3');
writeFileSync(shim, '#!/bin/sh\ntouch "$0.ran"\nexec /usr/bin/python3 "$@"\n');
chmodSync(shim, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('findPython', () => {
  it('takes the interpreter, not a script in front of it on PATH', () => {
    const saved = process.env.PATH;
    process.env.PATH = `${dir}:${saved}`;
    try {
      const found = findPython();
      expect(found).toBeDefined();
      expect(found).not.toBe(shim);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('the tree index starts the interpreter, never the shim (it used to take the first python3 on PATH)', async () => {
    const saved = process.env.PATH;
    process.env.PATH = `${dir}:${saved}`;
    let index: TreeIndex | undefined;
    try {
      index = TreeIndex.start();
      expect(index).toBeDefined();
      expect(await index!.sync()).toBeTypeOf('number'); // the helper answered, so it ran
    } finally {
      index?.close();
      process.env.PATH = saved;
    }
    expect(existsSync(`${shim}.ran`)).toBe(false);
  });

  it('refuses a named python that is a script', () => {
    expect(findPython(shim)).toBeUndefined();
  });
});

describe('findPerl', () => {
  it("takes the system's perl, never a perl first on PATH", () => {
    const script = join(dir, 'perl');
    writeFileSync(script, '#!/bin/sh\ntouch "$0.ran"\nexec /usr/bin/perl "$@"\n', { mode: 0o755 });
    const saved = process.env.PATH;
    process.env.PATH = `${dir}:${saved}`;
    try {
      expect(findPerl()).toMatch(/^(\/usr)?\/bin\/perl$/);
    } finally {
      process.env.PATH = saved;
    }
  });
});
