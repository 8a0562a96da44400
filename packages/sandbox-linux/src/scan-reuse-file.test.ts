import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadReuseFile } from './scan-reuse-file.js';
import { reusedScanCount } from './scan-reuse.js';
import { findPatternMatches, forgetKeptScans, lastReuseFile, type ScanOptions } from './scan.js';
import { makeScene, req, type Scene, until, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox, type LinuxSandbox } from './service.js';

// A one-shot process (`aalis exec`) keeps the scan's walks in a file of the data directory
// (scan-reuse-file.ts) and the next process starts from them. Each "process" here is the same
// sandbox with this thread's kept walks forgotten first (forgetKeptScans), so only the file carries
// them over. The file is trusted material: a walk it holds is given again while its directories are
// unchanged, so only a file that this user alone could have written is read.
let s: Scene;
let sandbox: LinuxSandbox;
let file: string;
let options: ScanOptions;
const secret = () => join(s.home, 'code', '.env');

beforeAll(() => {
  s = makeScene();
  mkdirSync(join(s.home, 'code'));
  file = join(s.data, 'cache', 'linux-scan-reuse.json');
  // settled at once, so a scene made a moment ago is kept; no listings in memory, as in a one-shot process
  options = { home: s.home, reuseSettledMs: 0, noCache: true, reuseFile: file };
  sandbox = createLinuxSandbox({ hostWalks: 'inline', scan: options });
});

afterEach(() => {
  rmSync(file, { force: true });
  rmSync(secret(), { force: true });
  forgetKeptScans();
});

afterAll(async () => {
  await sandbox.close();
  s.cleanup();
});

/** One run of `argv` as a new process would make it: nothing kept in memory. */
async function freshRun(argv: [string, ...string[]]) {
  forgetKeptScans();
  return await sandbox.run(req(s, argv));
}

/** The home's `.env` names the next scan finds (what the sandbox would hide). */
function homeEnvs(): string[] {
  forgetKeptScans();
  return findPatternMatches(workspacePolicy(s), options, new Set(), s.ws).matched.filter((p) => p.startsWith(join(s.home, 'code')));
}

/** The file as the last run wrote it, every walk's matches emptied and its witnesses kept: what a forger would plant. */
function forge(): string {
  const kept = JSON.parse(readFileSync(file, 'utf8')) as { walks: { value: { added: unknown[] } }[] };
  for (const w of kept.walks) w.value.added = [];
  return JSON.stringify(kept);
}

describe('the scan kept in a file between processes', () => {
  it('is written 0600 in a 0700 directory and given again to the next process', async () => {
    await freshRun(['true']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(s.data, 'cache')).mode & 0o777).toBe(0o700);
    const before = reusedScanCount(s.home);
    const r = await freshRun(['true']);
    expect(r.exitCode).toBe(0);
    expect(lastReuseFile()?.kind).toBe('loaded');
    expect(reusedScanCount(s.home)).toBe(before + 1); // the home's walk came from the file
  });

  it('a .env made in the home after the file was written is hidden from the next process', async () => {
    await freshRun(['true']);
    await freshRun(['true']); // the home's walk is in the file now
    writeFileSync(secret(), 'TOKEN=LEAKED\n');
    const before = reusedScanCount(join(s.home, 'code'));
    const r = await freshRun(['cat', secret()]);
    expect(r.stdout).not.toContain('LEAKED');
    expect(r.stdout).toBe(''); // an empty file stands in for it
    expect(reusedScanCount(join(s.home, 'code'))).toBe(before); // the directory changed: its part of the home walked again
  });

  it("a change in one directory of the home walks that part again, and the home's other parts come from the file", async () => {
    const other = join(s.home, 'other');
    mkdirSync(other, { recursive: true });
    try {
      await freshRun(['true']);
      await freshRun(['true']);
      const [home, code, rest] = [reusedScanCount(s.home), reusedScanCount(join(s.home, 'code')), reusedScanCount(other)];
      writeFileSync(join(s.home, 'code', 'notes.txt'), 'x\n');
      mkdirSync(join(s.home, 'code', 'deeper'));
      writeFileSync(join(s.home, 'code', 'deeper', '.env'), 'TOKEN=LEAKED\n');
      const r = await freshRun(['cat', join(s.home, 'code', 'deeper', '.env')]);
      expect(r.stdout).toBe('');
      expect(reusedScanCount(s.home)).toBe(home + 1); // the home's own listing did not change
      expect(reusedScanCount(other)).toBe(rest + 1);
      expect(reusedScanCount(join(s.home, 'code'))).toBe(code); // walked again
    } finally {
      rmSync(other, { recursive: true, force: true });
      rmSync(join(s.home, 'code'), { recursive: true, force: true });
      mkdirSync(join(s.home, 'code'));
    }
  });

  it('a session temp of another name (each process has its own) still meets the kept walks', async () => {
    const other = join(s.data, 'tmp', 'session-2');
    mkdirSync(other, { recursive: true });
    try {
      await freshRun(['true']);
      const before = reusedScanCount(s.home);
      forgetKeptScans();
      const policy = workspacePolicy(s, { tmp: other, readAllowWithin: [other], write: [s.ws, other], unixSockets: [s.ws, other] });
      const r = await sandbox.run(req(s, ['true'], { policy }));
      expect(r.exitCode).toBe(0);
      expect(reusedScanCount(s.home)).toBe(before + 1);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("a writer killed (SIGKILL) before its rename leaves a temp, which the next writer removes; a live writer's is left alone", async () => {
    const dead = spawnSync('true').pid!; // ended: its pid names no process now
    const cache = join(s.data, 'cache');
    await freshRun(['true']);
    const left = join(cache, `linux-scan-reuse.json.${dead}.0123456789ab.tmp`);
    const live = join(cache, `linux-scan-reuse.json.${process.pid}.0123456789ab.tmp`);
    writeFileSync(left, '{"v":1,"wal', { mode: 0o600 }); // torn mid-write
    writeFileSync(live, '{"v":1,"wal', { mode: 0o600 });
    try {
      writeFileSync(secret(), 'TOKEN=LEAKED\n'); // the walk changes: the file is written again
      const r = await freshRun(['cat', secret()]);
      expect(r.stdout).toBe('');
      expect(existsSync(left)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      rmSync(live, { force: true });
      rmSync(left, { force: true });
    }
  });

  it.skipIf(process.getuid?.() !== 0)('a directory with a .env mounted over a listed directory after the file was written: hidden from the next process', async () => {
    const other = join(s.root, 'mounted');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, '.env'), 'TOKEN=LEAKED\n');
    await freshRun(['true']);
    await freshRun(['true']); // the home's walks are in the file now
    expect(spawnSync('mount', ['--bind', other, join(s.home, 'code')]).status).toBe(0);
    try {
      const r = await freshRun(['cat', secret()]);
      expect(r.exitCode).toBe(0); // an empty stand-in was read
      expect(r.stdout).not.toContain('LEAKED');
      expect(r.stdout).toBe('');
    } finally {
      spawnSync('umount', [join(s.home, 'code')]);
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('a .env made later in a directory whose name is not UTF-8: hidden from the next process', async () => {
    const odd = Buffer.concat([Buffer.from(`${join(s.home, 'code')}/`), Buffer.from([0x6f, 0xff, 0x64])]);
    mkdirSync(odd);
    try {
      await freshRun(['true']);
      await freshRun(['true']);
      writeFileSync(Buffer.concat([odd, Buffer.from('/.env')]), 'TOKEN=LEAKED\n');
      const r = await freshRun(['sh', '-c', `cat ${join(s.home, 'code')}/o*d/.env`]);
      expect(r.exitCode).toBe(0); // the name was found and read: an empty stand-in
      expect(r.stdout).not.toContain('LEAKED');
      expect(r.stdout).toBe('');
    } finally {
      rmSync(odd, { recursive: true, force: true });
    }
  });

  describe('a planted file claiming the home holds nothing, with every stamp right', () => {
    // the control: this user's own file is trusted, so the forgery would hide nothing if it were read
    it("is used when it is this user's own (why no one else may write it)", async () => {
      writeFileSync(secret(), 'TOKEN=LEAKED\n');
      await freshRun(['true']);
      await freshRun(['true']);
      writeFileSync(file, forge(), { mode: 0o600 });
      expect(homeEnvs()).toEqual([]);
    });

    const plants: [string, () => void, RegExp][] = [
      ['owned by another user', () => chownSync(file, 65534, 65534), /owned by uid 65534/],
      ['readable by others', () => chmodSync(file, 0o644), /mode 644/],
      ['a symlink to a forged file', () => {
        const elsewhere = join(s.root, 'forged.json');
        writeFileSync(elsewhere, readFileSync(file), { mode: 0o600 });
        rmSync(file);
        symlinkSync(elsewhere, file);
      }, /symlink/],
      ['with a second hard link (another name that could be written)', () => linkSync(file, join(s.root, 'forged-link.json')), /other hard links/],
      ['not JSON (a torn write)', () => writeFileSync(file, '{"v":1,"walks":[{"key"', { mode: 0o600 }), /not JSON/],
      ['of another shape', () => writeFileSync(file, JSON.stringify({ v: 1, walks: [{ key: 'x', witnesses: [], value: {} }] }), { mode: 0o600 }), /not kept walks/],
    ];
    it.each(plants)('%s is ignored, and the .env stays hidden from a real sandboxed cat', async (_, plant, why) => {
      writeFileSync(secret(), 'TOKEN=LEAKED\n');
      await freshRun(['true']);
      await freshRun(['true']);
      writeFileSync(file, forge(), { mode: 0o600 });
      plant();
      expect(homeEnvs()).toEqual([secret()]);
      const load = lastReuseFile();
      expect(load?.kind).toBe('ignored');
      expect(load?.kind === 'ignored' ? load.why : '').toMatch(why);
      const r = await freshRun(['cat', secret()]);
      expect(r.stdout).not.toContain('LEAKED');
      expect(r.stdout).toBe(''); // an empty file stands in for it
      rmSync(file, { force: true });
    });

    it('in a directory others can write is ignored', async () => {
      writeFileSync(secret(), 'TOKEN=LEAKED\n');
      await freshRun(['true']);
      await freshRun(['true']);
      writeFileSync(file, forge(), { mode: 0o600 });
      chmodSync(join(s.data, 'cache'), 0o777);
      try {
        expect(homeEnvs()).toEqual([secret()]);
        expect(lastReuseFile()).toMatchObject({ kind: 'ignored', why: expect.stringMatching(/writable by others/) });
      } finally {
        chmodSync(join(s.data, 'cache'), 0o700);
      }
    });
  });

  it('a cache directory swapped for a symlink to a directory others can write while the file is read: never read from there', { timeout: 120_000 }, async () => {
    // the cache directory is checked once and used through that descriptor (scan-reuse-file.ts); checked
    // by path and then opened by path, a swap in between read the planted file (seen before the change)
    const race = join(s.root, 'race');
    const cache = join(race, 'cache');
    const open = join(race, 'open');
    mkdirSync(cache, { recursive: true, mode: 0o700 });
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    const planted = { v: 1, walks: [{ key: 'a'.repeat(64), witnesses: ['1:2:3:/planted'], value: {} }] };
    writeFileSync(join(open, 'walks.json'), JSON.stringify(planted), { mode: 0o600 });
    symlinkSync(open, join(race, 'link'));
    const swap = `import os
os.chdir(${JSON.stringify(race)})
while True:
    os.rename("cache", "cache.real"); os.rename("link", "cache"); os.rename("cache", "link"); os.rename("cache.real", "cache")
`;
    const swapper = spawn('/usr/bin/python3', ['-c', swap], { stdio: 'ignore' });
    const kinds = new Map<string, number>();
    try {
      // one lstat, its ENOENT meaning the swapper moved the directory away: an exists-then-lstat pair
      // raced the swapper and threw (seen in CI)
      const swapped = () => {
        try {
          return lstatSync(cache).isSymbolicLink();
        } catch {
          return true;
        }
      };
      await until(swapped, 'the swapper runs');
      // at least 5000 reads, and on until both the real directory and the symlink were met (a loaded machine may hold the swapper still)
      const met = () => (kinds.get('absent') ?? 0) > 0 && (kinds.get('ignored') ?? 0) > 0;
      for (let i = 0; i < 5000 || (!met() && i < 1_000_000); i++) {
        const kind = loadReuseFile(join(cache, 'walks.json'), z.unknown()).kind;
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
    } finally {
      swapper.kill('SIGKILL');
      await new Promise((r) => swapper.once('exit', r));
      if (existsSync(cache) && lstatSync(cache).isSymbolicLink()) renameSync(cache, join(race, 'link'));
      if (existsSync(join(race, 'cache.real'))) renameSync(join(race, 'cache.real'), cache);
    }
    // never the planted file; and the real directory, holding no file, was met too (the counts show on a failure)
    expect({ loaded: kinds.get('loaded') ?? 0, metAbsent: (kinds.get('absent') ?? 0) > 0, kinds: Object.fromEntries(kinds) }).toMatchObject({ loaded: 0, metAbsent: true });
  });
});

