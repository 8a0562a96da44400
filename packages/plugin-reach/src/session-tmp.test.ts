import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureSessionTmp, migrateSessionTmps, sessionTmpOf } from './session-tmp.js';

let base: string;
beforeEach(() => {
  base = join(mkdtempSync(join(tmpdir(), 'aalis-session-tmp-')), 'tmp');
});
afterEach(() => rmSync(dirname(base), { recursive: true, force: true }));

describe('session temps', () => {
  it('go one level down, by the first two hex digits of their name, mode 0700', async () => {
    const path = await ensureSessionTmp(base, 'chat-1');
    expect(path).toBe(sessionTmpOf(base, 'chat-1'));
    const name = basename(path);
    expect(name).toMatch(/^session-[0-9a-f]{24}$/);
    expect(basename(dirname(path))).toBe(name.slice('session-'.length, 'session-'.length + 2));
    for (const d of [path, dirname(path)]) expect(statSync(d).mode & 0o777).toBe(0o700);
    expect(await ensureSessionTmp(base, 'chat-1')).toBe(path); // the next call of the conversation
  });

  it('spread 10,000 conversations over at most 256 directories, none holding more than a few dozen', async () => {
    for (let i = 0; i < 10_000; i++) mkdirSync(sessionTmpOf(base, `chat-${i}`), { recursive: true });
    const shards = readdirSync(base);
    expect(shards.length).toBeLessThanOrEqual(256);
    expect(Math.max(...shards.map((s) => readdirSync(join(base, s)).length))).toBeLessThan(80);
  });

  it('moves a temp from before the shards to its place, with what the conversation kept there', async () => {
    const old = join(base, basename(sessionTmpOf(base, 'chat-2')));
    mkdirSync(old, { recursive: true });
    writeFileSync(join(old, 'kept.txt'), 'kept\n');
    const path = await ensureSessionTmp(base, 'chat-2');
    expect(readFileSync(join(path, 'kept.txt'), 'utf8')).toBe('kept\n');
    expect(existsSync(old)).toBe(false);
  });

  it('never moves what a symlink at the old name leads to: the temp is a new directory', async () => {
    const elsewhere = join(dirname(base), 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(base, { recursive: true });
    const old = join(base, basename(sessionTmpOf(base, 'chat-3')));
    symlinkSync(elsewhere, old);
    const path = await ensureSessionTmp(base, 'chat-3');
    expect(lstatSync(path).isDirectory()).toBe(true);
    expect(lstatSync(old).isSymbolicLink()).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
  });

  it('moves every temp from before the shards once the first conversation comes, the symlinks left', async () => {
    for (let i = 0; i < 50; i++) mkdirSync(join(base, basename(sessionTmpOf(base, `old-${i}`))), { recursive: true });
    writeFileSync(join(base, basename(sessionTmpOf(base, 'old-7')), 'kept.txt'), 'kept\n');
    symlinkSync(dirname(base), join(base, `session-${'f'.repeat(24)}`));
    await ensureSessionTmp(base, 'chat-4');
    await migrateSessionTmps(base);
    expect(readdirSync(base).filter((n) => n.startsWith('session-'))).toEqual([`session-${'f'.repeat(24)}`]);
    for (let i = 0; i < 50; i++) expect(lstatSync(sessionTmpOf(base, `old-${i}`)).isDirectory()).toBe(true);
    expect(readFileSync(join(sessionTmpOf(base, 'old-7'), 'kept.txt'), 'utf8')).toBe('kept\n');
  });
});
