// Real files and real processes: symlinks planted at the final name and in the parents, a racer
// process swapping directories for symlinks, hard links, names that are not UTF-8, paths over
// PATH_MAX, and writers killed with SIGKILL. After each, nothing outside the judged path changed.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  cleanStaleTemps,
  copyFileAtomic,
  listDirNoFollow,
  makeDirs,
  moveAside,
  openForAppend,
  readFileNoFollow,
  removeFile,
  renameNoFollow,
  writeFileAtomic,
} from './safe-file.js';
import { SafeFileError, type SafeFileErrorCode } from './safe-file-error.js';
import { makeDirsSync, moveAsideSync, removeFileSync, removeTreeSync, renameNoFollowSync } from './safe-file-sync.js';
import { TempJournal } from './temp-journal.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-safe-file-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let ws: string;
let home: string;
let hooks: string;
beforeEach(() => {
  const run = mkdtempSync(join(root, 'run-'));
  ws = join(run, 'ws');
  home = join(run, 'home');
  hooks = join(ws, '.git', 'hooks');
  mkdirSync(hooks, { recursive: true });
  mkdirSync(home);
  writeFileSync(join(home, '.bashrc'), 'export OK=1\n');
  writeFileSync(join(hooks, 'pre-commit.sample'), '#!/bin/sh\n');
});

/** Every entry under `dir` (names as bytes, shown latin1): kind, mode, and content hash or link target. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: Buffer) => {
    const key = path.toString('latin1');
    const info = lstatSync(path);
    if (info.isSymbolicLink()) out[key] = `link ${readlinkSync(path, { encoding: 'buffer' }).toString('latin1')}`;
    else if (info.isFile()) out[key] = `file ${info.mode} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    else if (info.isDirectory()) {
      out[key] = `dir ${info.mode}`;
      for (const name of readdirSync(path, { encoding: 'buffer' })) visit(Buffer.concat([path, Buffer.from('/'), name]));
    }
  };
  visit(Buffer.from(dir));
  return out;
}

async function refusal(promise: Promise<unknown>): Promise<SafeFileError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SafeFileError) return error;
    throw new Error(`expected a SafeFileError, got ${String(error)}`);
  }
  throw new Error('expected a refusal, the operation succeeded');
}

function spawnFixture(name: string, args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', name), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', () => resolve(child));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${name} exited early (${code})`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

describe('safe file layer: a symlink at the final name', () => {
  const plants: [string, () => string][] = [
    ['to a new file in HOME', () => join(home, 'planted')],
    ['to an existing file in HOME', () => join(home, '.bashrc')],
    ['to a new git hook', () => join(hooks, 'pre-commit')],
  ];
  const operations: [string, (target: string) => Promise<unknown>, SafeFileErrorCode][] = [
    ['writeFileAtomic', (t) => writeFileAtomic(t, 'evil\n'), 'final-symlink'],
    ['writeFileAtomic with createParents', (t) => writeFileAtomic(t, 'evil\n', { createParents: true }), 'final-symlink'],
    ['copyFileAtomic', (t) => copyFileAtomic(join(home, '.bashrc'), t), 'final-symlink'],
    ['openForAppend', (t) => openForAppend(t).then((h) => h.close()), 'final-symlink'],
    ['renameNoFollow onto it', (t) => renameNoFollow(join(ws, 'source.txt'), t), 'final-symlink'],
    ['readFileNoFollow', (t) => readFileNoFollow(t), 'final-symlink'],
  ];
  for (const [plantName, pointsTo] of plants) {
    for (const [opName, op, code] of operations) {
      it(`${opName} refuses a symlink ${plantName} (${code}) and changes nothing outside`, async () => {
        writeFileSync(join(ws, 'source.txt'), 'mine\n');
        const target = join(ws, 'out.txt');
        symlinkSync(pointsTo(), target);
        const before = { home: snapshot(home), hooks: snapshot(hooks) };
        const error = await refusal(op(target));
        expect(error.code).toBe(code);
        expect(error.message).toContain(target);
        expect(error.message).toMatch(/symlink/);
        expect({ home: snapshot(home), hooks: snapshot(hooks) }).toEqual(before);
        expect(lstatSync(target).isSymbolicLink()).toBe(true);
        expect(readdirSync(ws).filter((n) => n.endsWith('.aalis-tmp'))).toEqual([]);
      });
    }
  }
});

describe('safe file layer: parents', () => {
  it('refuses a symlinked parent leading outside, for every operation, and makes no directory anywhere', async () => {
    symlinkSync(home, join(ws, 'link'));
    const before = { home: snapshot(home), ws: snapshot(ws) };
    const cases: [string, () => Promise<unknown>][] = [
      ['write', () => writeFileAtomic(join(ws, 'link', 'f.txt'), 'x')],
      ['write deep', () => writeFileAtomic(join(ws, 'link', 'new', 'deeper', 'f.txt'), 'x', { createParents: true })],
      ['makeDirs', () => makeDirs(join(ws, 'link', 'new', 'deeper'))],
      ['append', () => openForAppend(join(ws, 'link', '.bashrc')).then((h) => h.close())],
      ['read', () => readFileNoFollow(join(ws, 'link', '.bashrc'))],
      ['remove', () => removeFile(join(ws, 'link', '.bashrc'))],
      ['rename', () => renameNoFollow(join(ws, 'link', '.bashrc'), join(ws, 'stolen'))],
    ];
    for (const [name, op] of cases) {
      const error = await refusal(op());
      expect([name, error.code]).toEqual([name, expect.stringMatching(/^(parent-elsewhere|opened-elsewhere)$/)]);
    }
    expect({ home: snapshot(home), ws: snapshot(ws) }).toEqual(before);
  });

  it('refuses a dangling symlink on the way of makeDirs before making anything', async () => {
    symlinkSync(join(home, 'not-yet'), join(ws, 'dangling'));
    const before = { home: snapshot(home), ws: snapshot(ws) };
    expect((await refusal(makeDirs(join(ws, 'dangling', 'a', 'b')))).code).toBe('parent-elsewhere');
    expect((await refusal(writeFileAtomic(join(ws, 'dangling', 'f'), 'x', { createParents: true }))).code).toBe('parent-elsewhere');
    expect({ home: snapshot(home), ws: snapshot(ws) }).toEqual(before);
  });

  it('makes missing directories one by one and says which it made', async () => {
    mkdirSync(join(ws, 'a'));
    expect(await makeDirs(join(ws, 'a', 'b', 'c'))).toEqual([join(ws, 'a', 'b'), join(ws, 'a', 'b', 'c')]);
    expect(await makeDirs(join(ws, 'a', 'b', 'c'))).toEqual([]);
    await writeFileAtomic(join(ws, 'x', 'y', 'z.txt'), 'z', { createParents: true });
    expect(readFileSync(join(ws, 'x', 'y', 'z.txt'), 'utf8')).toBe('z');
    expect((await refusal(writeFileAtomic(join(ws, 'missing', 'z.txt'), 'z'))).code).toBe('missing-parent');
  });
});

describe('safe file layer: what it writes', () => {
  it('replaces a hard-linked target: the other name (outside) keeps its content', async () => {
    linkSync(join(home, '.bashrc'), join(ws, 'linked'));
    const before = snapshot(home);
    await writeFileAtomic(join(ws, 'linked'), 'new\n');
    expect(readFileSync(join(ws, 'linked'), 'utf8')).toBe('new\n');
    expect(snapshot(home)).toEqual(before);
    await copyFileAtomic(join(ws, 'linked'), join(ws, 'copy'));
    expect(readFileSync(join(ws, 'copy'), 'utf8')).toBe('new\n');
  });

  it('keeps the mode of a replaced file', async () => {
    writeFileSync(join(ws, 'run.sh'), 'old', { mode: 0o750 });
    await writeFileAtomic(join(ws, 'run.sh'), 'new');
    expect(lstatSync(join(ws, 'run.sh')).mode & 0o777).toBe(0o750);
  });

  it('writes and refuses names that are not UTF-8, as bytes, and never writes elsewhere', async () => {
    const wsBytes = Buffer.from(ws);
    const odd = Buffer.concat([wsBytes, Buffer.from('/d\xff', 'latin1')]);
    mkdirSync(odd);
    const file = Buffer.concat([odd, Buffer.from('/f\xfe.txt', 'latin1')]);
    await writeFileAtomic(file, 'bytes\n');
    expect(readFileSync(file, 'utf8')).toBe('bytes\n');
    // The same name as text (U+FFFD where the bytes were) is another name: missing, not a write there.
    const before = snapshot(ws);
    expect((await refusal(writeFileAtomic(`${ws}/d\ufffd/f.txt`, 'x'))).code).toBe('missing-parent');
    // A dangling symlink with a name that is not UTF-8, pointing to HOME.
    const link = Buffer.concat([wsBytes, Buffer.from('/l\xff', 'latin1')]);
    symlinkSync(join(home, 'planted'), link);
    const beforeHome = snapshot(home);
    expect((await refusal(writeFileAtomic(link, 'evil'))).code).toBe('final-symlink');
    expect(snapshot(home)).toEqual(beforeHome);
    expect(Object.keys(snapshot(ws)).length).toBe(Object.keys(before).length + 1);
    // Moved aside as bytes, without following.
    const aside = await moveAside(link, join(ws, '.aside'));
    expect(Buffer.isBuffer(aside)).toBe(true);
    expect(lstatSync(aside).isSymbolicLink()).toBe(true);
  });

  it('refuses a path over PATH_MAX and a name over NAME_MAX with a clear error, writing nothing', async () => {
    const before = snapshot(ws);
    const long = `${ws}/${Array.from({ length: 40 }, () => 'd'.repeat(120)).join('/')}/f.txt`;
    const error = await refusal(writeFileAtomic(long, 'x', { createParents: true }));
    expect(error.code).toBe('path-too-long');
    expect(error.message).toMatch(/PATH_MAX/);
    expect((await refusal(writeFileAtomic(`${ws}/${'n'.repeat(300)}`, 'x'))).code).toBe('path-too-long');
    expect((await refusal(writeFileAtomic('relative/f.txt', 'x'))).code).toBe('bad-path');
    expect((await refusal(writeFileAtomic(`${ws}/../escape.txt`, 'x'))).code).toBe('bad-path');
    expect(snapshot(ws)).toEqual(before);
  });

  it('moves aside without following and without replacing', async () => {
    writeFileSync(join(ws, 'a'), '1');
    writeFileSync(join(ws, 'b'), '2');
    const aside = join(ws, '.aside');
    const first = await moveAside(join(ws, 'a'), aside, 'x');
    const second = await moveAside(join(ws, 'b'), aside, 'x');
    expect([first, second]).toEqual([join(aside, 'x'), join(aside, 'x~1')]);
    expect(readFileSync(join(aside, 'x'), 'utf8')).toBe('1');
    expect(readFileSync(join(aside, 'x~1'), 'utf8')).toBe('2');
  });

  it('cleans stale temp files of a directory and only those', async () => {
    writeFileSync(join(ws, '.doc.json.0123456789ab.aalis-tmp'), 'stale');
    writeFileSync(join(ws, '.notes.txt.abcdefabcdef.aalis-write'), 'stale');
    writeFileSync(join(ws, 'keep.aalis-tmp'), 'not ours');
    symlinkSync(join(home, '.bashrc'), join(ws, '.x.0123456789ab.aalis-tmp'));
    expect((await cleanStaleTemps(ws)).sort()).toEqual([join(ws, '.doc.json.0123456789ab.aalis-tmp'), join(ws, '.notes.txt.abcdefabcdef.aalis-write')]);
    expect(readdirSync(ws).sort()).toEqual(['.git', '.x.0123456789ab.aalis-tmp', 'keep.aalis-tmp']);
    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe('export OK=1\n');
  });
});

describe('temp journal', () => {
  it("removes the temps of processes gone, never those of a process still running", async () => {
    const journalDir = join(ws, '..', 'journal');
    mkdirSync(journalDir);
    const live = spawn('sleep', ['30']);
    const dead = spawn('true');
    await new Promise((r) => dead.once('exit', r));
    const tempOf = (tag: string) => join(ws, `.file.${tag.padEnd(12, '0')}.aalis-tmp`);
    for (const [tag, pid] of [['aaaa', live.pid], ['bbbb', dead.pid]] as const) {
      writeFileSync(tempOf(tag), 'half');
      writeFileSync(join(journalDir, `.safe-file-temps.${pid}`), `${Buffer.from(tempOf(tag)).toString('hex')}\n`);
    }
    // A record that is not a temp name is never removed, whatever the journal says.
    writeFileSync(join(ws, 'precious.txt'), 'keep');
    writeFileSync(join(journalDir, '.safe-file-temps.1999999'), `${Buffer.from(join(ws, 'precious.txt')).toString('hex')}\n0a0b`);
    try {
      const journal = await TempJournal.open(journalDir);
      expect(journal.cleaned).toEqual([tempOf('bbbb')]);
      expect(existsSync(tempOf('aaaa'))).toBe(true);
      expect(existsSync(tempOf('bbbb'))).toBe(false);
      expect(readFileSync(join(ws, 'precious.txt'), 'utf8')).toBe('keep');
      expect(readdirSync(journalDir).sort()).toEqual([`.safe-file-temps.${live.pid}`, `.safe-file-temps.${process.pid}`].sort());
    } finally {
      live.kill('SIGKILL');
    }
  });
});

describe('safe file layer: races and kills', () => {
  it('a racer swapping a parent for a symlink and the target for a dangling symlink never gets a write outside', async () => {
    const outside = home;
    const before = snapshot(outside);
    const racer = await spawnFixture('swapper.ts', [ws, outside]);
    let written = 0;
    const refused = new Map<string, number>();
    try {
      for (let round = 0; round < 400; round++) {
        const ops = [
          writeFileAtomic(join(ws, 'sub', 'f.txt'), `round ${round}\n`),
          writeFileAtomic(join(ws, 'sub', 'new', `d${round}`, 'f.txt'), 'x', { createParents: true }),
          writeFileAtomic(join(ws, 'swapped.txt'), `round ${round}\n`),
          openForAppend(join(ws, 'sub', 'log.txt')).then((h) => h.write('line\n').finally(() => h.close())),
        ];
        for (const result of await Promise.allSettled(ops)) {
          if (result.status === 'fulfilled') written++;
          else {
            expect(result.reason).toBeInstanceOf(SafeFileError);
            const code = (result.reason as SafeFileError).code;
            refused.set(code, (refused.get(code) ?? 0) + 1);
          }
        }
      }
    } finally {
      await kill(racer);
    }
    expect(snapshot(outside)).toEqual(before);
    // The race was real: both outcomes happened many times.
    expect(written).toBeGreaterThan(20);
    expect([...refused.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(20);
    expect(refused.get('io')).toBeUndefined();
  }, 120_000);

  it('a writer killed at random points leaves each target old or new, and the next start removes its temps', async () => {
    const journalDir = join(ws, '..', 'journal');
    for (let round = 0; round < 8; round++) {
      const writer = await spawnFixture('safe-writer.ts', [journalDir, ws]);
      await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 400)));
      await kill(writer);
      const journal = await TempJournal.open(journalDir);
      const leftovers = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? leftovers(join(dir, e.name)) : e.name.endsWith('.aalis-tmp') ? [join(dir, e.name)] : []));
      expect(leftovers(ws)).toEqual([]);
      for (const target of [join(ws, 'a.txt'), join(ws, 'deep', 'b.txt'), join(ws, 'deep', 'deeper', 'c.txt')]) {
        let text: string;
        try {
          text = readFileSync(target, 'utf8');
        } catch {
          continue; // killed before its first write
        }
        const [version, length, body] = text.split('\n');
        expect(Number(version)).toBeGreaterThan(0);
        expect(body?.length).toBe(Number(length));
        expect(body).toBe('x'.repeat(Number(length)));
      }
      expect(journal.cleaned.every((t) => t.endsWith('.aalis-tmp'))).toBe(true);
    }
  }, 120_000);
});

describe('safe file layer, synchronous side (for the sandbox looks)', () => {
  // The docker backend removed a command's refused writes by path: a parent another container
  // swapped for a symlink meanwhile was followed, outside the workspace (found by an attack).
  it('removes a tree without following a symlink in it or on the way to it', () => {
    const tree = join(ws, 'tree-to-remove');
    mkdirSync(join(tree, 'deep'), { recursive: true });
    writeFileSync(join(tree, 'deep', 'f'), 'x');
    symlinkSync(home, join(tree, 'deep', 'out'));
    symlinkSync(home, join(ws, 'link-to-home'));
    const before = snapshot(home);
    expect(removeTreeSync(tree)).toBe(true);
    expect(existsSync(tree)).toBe(false);
    expect(removeTreeSync(tree)).toBe(false);
    let code = 'ok';
    try {
      removeTreeSync(join(ws, 'link-to-home', '.bashrc'));
    } catch (error) {
      code = error instanceof SafeFileError ? error.code : String(error);
    }
    expect(code).toBe('parent-elsewhere');
    expect(snapshot(home)).toEqual(before);
  });

  // A bind mount under the tree: `..` at its root leads back up the tree, so the identity check on
  // the way back passed, and the removal emptied the mount's source (found by an attack).
  it.skipIf(process.getuid?.() !== 0)('never removes what is mounted inside the tree: it stops there and says so', () => {
    const tree = join(ws, 'tree-with-mount');
    const source = join(ws, 'mounted-source');
    mkdirSync(join(tree, 'a', 'mnt'), { recursive: true });
    writeFileSync(join(tree, 'a', 'before.txt'), 'x');
    mkdirSync(join(source, 'keep'), { recursive: true });
    writeFileSync(join(source, 'keep', 'file'), 'kept\n');
    execFileSync('mount', ['--bind', source, join(tree, 'a', 'mnt')]);
    let code = 'ok';
    try {
      removeTreeSync(tree);
    } catch (error) {
      code = (error as { code?: string }).code ?? String(error);
    } finally {
      execFileSync('umount', [join(tree, 'a', 'mnt')]);
    }
    expect(code).toBe('mount-point');
    expect(readFileSync(join(source, 'keep', 'file'), 'utf8')).toBe('kept\n');
  });

  it('moves aside without following, refuses symlinked parents, and says when a move crosses file systems', () => {
    symlinkSync(home, join(ws, 'link'));
    symlinkSync(join(home, '.bashrc'), join(ws, 'to-bashrc'));
    writeFileSync(join(ws, 'made.txt'), 'made\n');
    const aside = join(ws, '..', 'aside');
    const before = snapshot(home);
    expect(moveAsideSync(join(ws, 'to-bashrc'), join(aside, 'deep'))).toBe(join(aside, 'deep', 'to-bashrc'));
    expect(lstatSync(join(aside, 'deep', 'to-bashrc')).isSymbolicLink()).toBe(true);
    expect(moveAsideSync(join(ws, 'made.txt'), aside, 'x')).toBe(join(aside, 'x'));
    writeFileSync(join(ws, 'made.txt'), 'again\n');
    expect(moveAsideSync(join(ws, 'made.txt'), aside, 'x')).toBe(join(aside, 'x~1'));
    const codeOf = (f: () => unknown) => {
      try {
        f();
        return 'ok';
      } catch (error) {
        return error instanceof SafeFileError ? error.code : String(error);
      }
    };
    expect(codeOf(() => moveAsideSync(join(ws, 'link', '.bashrc'), aside))).toBe('parent-elsewhere');
    expect(codeOf(() => moveAsideSync(join(ws, 'made.txt'), join(ws, 'link', 'stolen')))).toBe('parent-elsewhere');
    expect(codeOf(() => makeDirsSync(join(ws, 'link', 'a')))).toBe('parent-elsewhere');
    expect(codeOf(() => removeFileSync(join(ws, 'link', '.bashrc')))).toBe('parent-elsewhere');
    expect(codeOf(() => renameNoFollowSync(join(aside, 'x'), join(ws, 'link')))).toBe('final-symlink');
    expect(snapshot(home)).toEqual(before);
    if (existsSync('/dev/shm') && lstatSync('/dev/shm').dev !== lstatSync(ws).dev) {
      writeFileSync(join(ws, 'far.txt'), 'far');
      const shm = realpathSync(mkdtempSync('/dev/shm/aalis-safe-'));
      try {
        expect(codeOf(() => moveAsideSync(join(ws, 'far.txt'), shm))).toBe('cross-device');
      } finally {
        rmSync(shm, { recursive: true, force: true });
      }
    }
  });

  it('a racer swapping the parent for a symlink never makes moveAsideSync take an entry from outside', async () => {
    writeFileSync(join(home, 'victim'), 'not yours\n');
    const before = snapshot(home);
    const racer = await spawnFixture('swapper.ts', [ws, home]);
    const aside = join(ws, '..', 'aside');
    let moved = 0;
    let refused = 0;
    try {
      for (let round = 0; round < 1500; round++) {
        // Made through the layer too: a plain write would itself follow the racer's symlink.
        await writeFileAtomic(join(ws, 'sub', 'victim'), 'mine\n').catch(() => {});
        try {
          moveAsideSync(join(ws, 'sub', 'victim'), aside);
          moved++;
        } catch (error) {
          expect(error).toBeInstanceOf(SafeFileError);
          refused++;
        }
      }
    } finally {
      await kill(racer);
    }
    expect(snapshot(home)).toEqual(before);
    expect(moved).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    for (const name of readdirSync(aside)) expect(readFileSync(join(aside, name), 'utf8')).toBe('mine\n');
  }, 120_000);
});

const NOBODY = 65534;
const asNobody = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
function canSwitch(): boolean {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) return false;
  try {
    execFileSync(asNobody[0]!, [...asNobody.slice(1), 'test', '-r', join(import.meta.dirname, 'fixtures', 'unprivileged-safe.ts')]);
    return true;
  } catch {
    return false;
  }
}

// The daemon usually runs unprivileged: the same refusals as nobody, switched with setpriv;
// skipped (and so reported) where that user cannot read this checkout.
describe.skipIf(!canSwitch())('safe file layer as an unprivileged user (nobody)', () => {
  it('writes where it may, refuses planted and parent symlinks, and reports a directory it may not enter', () => {
    const run = join(ws, '..');
    symlinkSync(join(home, 'planted'), join(ws, 'dangling'));
    symlinkSync(home, join(ws, 'link'));
    mkdirSync(join(run, 'root-only'), { mode: 0o700 });
    for (const path of [run, ws, home]) chownSync(path, NOBODY, NOBODY);
    chownSync(root, NOBODY, NOBODY);
    const before = snapshot(home);
    const out = execFileSync(asNobody[0]!, [...asNobody.slice(1), process.execPath, '--import', 'tsx', join(import.meta.dirname, 'fixtures', 'unprivileged-safe.ts'), ws], {
      cwd: join(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
    });
    expect(JSON.parse(out.toString())).toEqual({ uid: NOBODY, write: 'ok', dangling: 'final-symlink', parent: 'parent-elsewhere', dirs: 'parent-elsewhere', foreign: 'permission' });
    expect(readFileSync(join(ws, 'new', 'f.txt'), 'utf8')).toBe('mine\n');
    expect(snapshot(home)).toEqual(before);
  }, 60_000);
});

// The kernel's trees are refused by what the opened file is on, not by its path: procfs or sysfs
// mounted anywhere (a container's /host/proc, a bind mount in a workspace) is the daemon's own
// process and the host's kernel as /proc is.
describe.runIf(process.platform === 'linux')('a file on a kernel file system', () => {
  it.each([[`/proc/${process.pid}/status`, 'proc'], [`/proc/${process.pid}/environ`, 'proc'], ['/sys/kernel/mm/transparent_hugepage/enabled', 'sysfs']])('%s is refused (%s)', async (path, fs) => {
    if (!existsSync(path)) return; // a kernel without it: the /proc rows still run
    const refused = await readFileNoFollow(path).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SafeFileError);
    expect(refused).toMatchObject({ code: 'kernel-file-system', message: expect.stringContaining(`it is on ${fs}`) });
    await expect(copyFileAtomic(path, join(mkdtempSync(join(tmpdir(), 'aalis-kfs-')), 'copy'))).rejects.toMatchObject({ code: 'kernel-file-system' });
  });

  it("a control group's process list (cgroup, cgroup2) is refused too, as is listing a kernel file system's directory", async () => {
    const procs = ['/sys/fs/cgroup/cgroup.procs', '/sys/fs/cgroup/pids/cgroup.procs', '/sys/fs/cgroup/memory/cgroup.procs'].find((p) => existsSync(p));
    if (procs !== undefined) await expect(readFileNoFollow(procs)).rejects.toMatchObject({ code: 'kernel-file-system', message: expect.stringMatching(/it is on cgroup2?,/) });
    await expect(listDirNoFollow(`/proc/${process.pid}/fd`)).rejects.toMatchObject({ code: 'kernel-file-system' });
    await expect(listDirNoFollow('/sys/kernel')).rejects.toMatchObject({ code: 'kernel-file-system' });
    // an ordinary directory lists, a symlink to one is refused, not followed
    const dir = mkdtempSync(join(tmpdir(), 'aalis-kfs-list-'));
    writeFileSync(join(dir, 'a.txt'), 'a');
    expect((await listDirNoFollow(dir)).map((e) => e.name.toString())).toEqual(['a.txt']);
    symlinkSync(dir, `${dir}-link`);
    await expect(listDirNoFollow(`${dir}-link`)).rejects.toMatchObject({ code: 'final-symlink' });
    rmSync(`${dir}-link`);
  });

  it('as root: nothing is made, written or renamed in a control group tree bound into a folder (cgroup, cgroup2)', async () => {
    if (process.getuid?.() !== 0) return; // mounting needs root; CI runs as root
    // a mounted cgroup hierarchy, as /proc/self/mountinfo lists it (its fifth field is where)
    const cgroup = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((f) => /^cgroup2?$/.test(f[f.indexOf('-') + 1] ?? ''))?.[4];
    if (cgroup === undefined) return; // no control groups mounted here
    const at = mkdtempSync(join(tmpdir(), 'aalis-kfs-cg-'));
    execFileSync('mount', ['--bind', cgroup, at]);
    const made = join(at, 'aalis-test-cg');
    try {
      await expect(writeFileAtomic(join(made, 'f.txt'), 'x', { createParents: true })).rejects.toMatchObject({ code: 'kernel-file-system' });
      await expect(makeDirs(made)).rejects.toMatchObject({ code: 'kernel-file-system' });
      expect(() => makeDirsSync(made)).toThrow(expect.objectContaining({ code: 'kernel-file-system' }));
      await expect(renameNoFollow(join(at, 'cgroup.procs'), join(at, 'moved'))).rejects.toMatchObject({ code: 'kernel-file-system' });
      expect(existsSync(made)).toBe(false);
    } finally {
      if (existsSync(made)) execFileSync('rmdir', [made]);
      execFileSync('umount', [at]);
      rmSync(at, { recursive: true, force: true });
    }
  });

  it('the same file system mounted at another path is refused as well (as root: a bind mount of this process\'s /proc directory)', async () => {
    if (process.getuid?.() !== 0) return; // mounting needs root; CI runs as root
    const at = mkdtempSync(join(tmpdir(), 'aalis-kfs-bind-'));
    execFileSync('mount', ['--bind', `/proc/${process.pid}`, at]);
    try {
      const refused = await readFileNoFollow(join(at, 'status')).catch((e: unknown) => e);
      expect(refused, String(refused)).toMatchObject({ code: 'kernel-file-system' });
      await expect(listDirNoFollow(join(at, 'fd'))).rejects.toMatchObject({ code: 'kernel-file-system' });
    } finally {
      execFileSync('umount', [at]);
      rmSync(at, { recursive: true, force: true });
    }
    // an ordinary file still reads
    const plain = join(mkdtempSync(join(tmpdir(), 'aalis-kfs-')), 'plain.txt');
    writeFileSync(plain, 'mine\n');
    expect((await readFileNoFollow(plain)).toString()).toBe('mine\n');
  });
});
