import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRegularSync } from './read-regular-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'aalis-read-regular-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'file'), 'one\ntwo\n');
writeFileSync(join(dir, 'big'), Buffer.alloc(100, 0x61));
symlinkSync('file', join(dir, 'link'));
mkdirSync(join(dir, 'dir'));
// a FIFO with no writer: an open by path without O_NONBLOCK waits until one comes
execFileSync('mkfifo', [join(dir, 'fifo')]);

describe('readRegularSync', () => {
  it.each([
    ['a regular file', 'file', {}, { kind: 'read', text: 'one\ntwo\n' }],
    ['nothing at the name', 'none', {}, { kind: 'missing' }],
    ['a symlink, not followed', 'link', {}, { kind: 'refused', why: 'it is a symlink' }],
    ['a symlink, followed', 'link', { follow: true }, { kind: 'read', text: 'one\ntwo\n' }],
    ['a FIFO with no writer (returns at once)', 'fifo', {}, { kind: 'refused', why: 'it is not a regular file' }],
    ['a directory', 'dir', {}, { kind: 'refused', why: 'it is not a regular file' }],
    ['a file over the bound', 'big', { maxBytes: 99 }, { kind: 'refused', why: 'it is larger than 99 bytes' }],
    ['a file at the bound', 'big', { maxBytes: 100 }, { kind: 'read', text: 'a'.repeat(100) }],
  ] as const)('%s', (_, name, extra, want) => {
    const got = readRegularSync(join(dir, name), { maxBytes: 1024, ...extra });
    expect(got.kind === 'read' ? { kind: 'read', text: got.bytes.toString('utf8') } : got).toEqual(want);
  });

  it('reads an open descriptor from its start and leaves it open', () => {
    const fd = openSync(join(dir, 'file'), 'r');
    try {
      const first = readRegularSync(fd, { maxBytes: 1024 });
      const again = readRegularSync(fd, { maxBytes: 1024 });
      expect([first, again].map((r) => (r.kind === 'read' ? r.bytes.toString('utf8') : r.kind))).toEqual(['one\ntwo\n', 'one\ntwo\n']);
    } finally {
      closeSync(fd);
    }
  });
});
