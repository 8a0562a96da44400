import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable } from './tools.js';

const root = mkdtempSync(join(tmpdir(), 'aalis-tools-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tool(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const p = join(dir, name);
  writeFileSync(p, '#!/bin/sh\n');
  chmodSync(p, 0o755);
  return p;
}

describe('findExecutable, answered from memory while PATH is unchanged', () => {
  it('sees a found program lose its exec bit or go at once, and the next one on PATH instead', () => {
    const a = join(root, 'gone', 'a');
    const b = join(root, 'gone', 'b');
    const path = `${a}:${b}`;
    const first = tool(a, 'prog');
    const second = tool(b, 'prog');
    expect(findExecutable('prog', path)).toBe(first);
    chmodSync(first, 0o644);
    expect(findExecutable('prog', path)).toBe(second);
    unlinkSync(second);
    expect(findExecutable('prog', path)).toBeUndefined();
  });

  it('finds a program installed since in a directory earlier on PATH once that directory has changed', async () => {
    const a = join(root, 'new', 'a');
    const b = join(root, 'new', 'b');
    mkdirSync(a, { recursive: true });
    const path = `${a}:${b}`;
    const later = tool(b, 'prog');
    expect(findExecutable('prog', path)).toBe(later);
    expect(findExecutable('other', path)).toBeUndefined();
    const earlier = tool(a, 'prog');
    const other = tool(b, 'other');
    // the directories are looked at again after at most a second
    await new Promise((r) => setTimeout(r, 1100));
    expect(findExecutable('prog', path)).toBe(earlier);
    expect(findExecutable('other', path)).toBe(other);
  });

  it('looks up an absolute name as it is', () => {
    const p = tool(join(root, 'abs'), 'prog');
    expect(findExecutable(p)).toBe(p);
    expect(findExecutable(join(root, 'abs', 'none'))).toBeUndefined();
  });
});
