// The file tools write on the host only at the path they judged, through core's safe file layer:
// planted dangling symlinks, a racer swapping a directory for a symlink, and a daemon killed
// mid-write. A real kernel (reach, approval, dispatcher) and real processes; nothing mocked.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { afterAll, describe, expect, it } from 'vitest';
import { installOf, startToolsKernel } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-safe-writes-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function layout(name: string) {
  const base = join(root, name);
  const home = join(base, 'home');
  const project = join(home, 'project');
  const outside = join(base, 'outside');
  mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(home, '.bashrc'), 'export OK=1\n');
  writeFileSync(join(outside, 'kept.txt'), 'kept\n');
  return { base, home, project, outside, dataDir: join(base, 'data'), install: installOf(base) };
}

/** Every entry under `dir`: kind and content hash or link target. */
function snapshot(dir: string, skip: (path: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: string) => {
    if (skip(path)) return;
    const info = lstatSync(path);
    if (info.isSymbolicLink()) out[path] = `link ${readlinkSync(path)}`;
    else if (info.isFile()) out[path] = `file ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    else if (info.isDirectory()) {
      out[path] = 'dir';
      for (const name of readdirSync(path)) visit(join(path, name));
    }
  };
  visit(dir);
  return out;
}

function spawnReady(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', () => resolve(child));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

// Swaps <dir>/sub for a symlink to <outside> and back, until killed.
const RACER = `
const fs = require('node:fs');
const [dir, outside] = process.argv.slice(1);
const sub = dir + '/sub', aside = dir + '/.sub-real', link = dir + '/.sub-link';
fs.mkdirSync(sub, { recursive: true });
const pause = new Int32Array(new SharedArrayBuffer(4));
const step = (f) => { try { f(); } catch {} };
process.stdout.write('ready\\n');
for (;;) {
  if (!fs.existsSync(aside)) step(() => fs.renameSync(sub, aside));
  step(() => fs.rmSync(sub, { recursive: true, force: true }));
  step(() => fs.symlinkSync(outside, link));
  step(() => fs.renameSync(link, sub));
  Atomics.wait(pause, 0, 0, 1);
  step(() => fs.rmSync(sub, { recursive: true, force: true }));
  step(() => fs.renameSync(aside, sub));
  Atomics.wait(pause, 0, 0, 1);
}`;

describe('write_file never follows a symlink it did not judge', () => {
  it('refuses a dangling symlink planted at the name (to HOME, to outside, to .git/hooks) and writes nothing anywhere', async () => {
    const l = layout('planted');
    const env = await startToolsKernel({ ...l, tier: 'workspace' });
    try {
      const plants: [string, string][] = [
        ['to-home.txt', join(l.home, '.profile-new')],
        ['to-outside.txt', join(l.outside, 'new.txt')],
        ['to-hook.txt', join(l.project, '.git', 'hooks', 'pre-commit')],
      ];
      for (const [name, target] of plants) symlinkSync(target, join(l.project, name));
      const before = snapshot(l.base, (p) => p.startsWith(l.dataDir));
      for (const [name] of plants) {
        for (const tool of ['write_file', 'edit_file'] as const) {
          const params = tool === 'write_file' ? { path: name, content: '#!/bin/sh\necho pwned\n' } : { path: name, oldText: 'a', newText: 'b' };
          const outcome = await env.call(tool, params);
          expect(outcome).toMatchObject({ ok: false });
          if (!outcome.ok) expect(outcome.message).toMatch(/final-symlink|does not exist/);
        }
      }
      const nested = await env.call('write_file', { path: 'to-outside.txt/inner.txt', content: 'x' });
      expect(nested.ok).toBe(false);
      // Longer than PATH_MAX: a clear refusal, nothing made on the way.
      const long = await env.call('write_file', { path: `${Array.from({ length: 40 }, () => 'd'.repeat(120)).join('/')}/f.txt`, content: 'x' });
      expect(long).toMatchObject({ ok: false, kind: 'denied', message: expect.stringMatching(/rule: path-too-long.*PATH_MAX/) });
      if (!long.ok) expect(long.message.length).toBeLessThan(1000);
      expect(snapshot(l.base, (p) => p.startsWith(l.dataDir))).toEqual(before);
    } finally {
      await env.kernel.stop();
    }
  });

  it('a racer swapping a project directory for a symlink to outside never gets a write outside', async () => {
    const l = layout('race');
    const env = await startToolsKernel({ ...l, tier: 'workspace' });
    const racer = await spawnReady(['-e', RACER, l.project, l.outside]);
    const before = snapshot(l.outside);
    let ok = 0;
    let refused = 0;
    try {
      for (let n = 0; n < 150; n++) {
        const outcomes = await Promise.all([env.call('write_file', { path: `sub/f-${n}.txt`, content: 'x' }), env.call('write_file', { path: `sub/new-${n}/f.txt`, content: 'x' })]);
        for (const o of outcomes) {
          if (o.ok) ok++;
          else refused++;
        }
      }
    } finally {
      await kill(racer);
      await env.kernel.stop();
    }
    expect(snapshot(l.outside)).toEqual(before);
    expect(ok).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 120_000);

  it('a daemon killed mid-write leaves no temp file after its next start, and each file is old or new', async () => {
    const l = layout('killed');
    const child = join(import.meta.dirname, 'fixtures', 'tools-writer.ts');
    const temps = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? temps(join(dir, e.name)) : /\.aalis-(tmp|write)$/.test(e.name) ? [join(dir, e.name)] : []));
    let leftBehind = 0;
    for (let round = 0; round < 5; round++) {
      const writer = await spawnReady(['--import', 'tsx', child, l.dataDir, l.home, l.project, l.install]);
      await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 500)));
      // then the first instant a write is under way: a kill timed by the clock alone could land
      // between writes in every round on a loaded machine (seen in a CI run)
      const deadline = Date.now() + 10_000;
      while (temps(l.project).length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      await kill(writer);
      leftBehind += temps(l.project).length;
      const env = await startToolsKernel({ ...l, tier: 'workspace' });
      await env.kernel.stop();
      expect(temps(l.project)).toEqual([]);
      for (const file of [join(l.project, 'a.txt'), join(l.project, 'deep', 'b.txt')]) {
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch {
          continue;
        }
        const [version, length, body] = text.split('\n');
        expect(Number(version)).toBeGreaterThan(0);
        expect(body).toBe('x'.repeat(Number(length)));
      }
    }
    // The kills did land mid-write: temps were there for the start to clean.
    expect(leftBehind).toBeGreaterThan(0);
  }, 180_000);
});
