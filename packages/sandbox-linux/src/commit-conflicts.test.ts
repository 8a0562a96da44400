import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxRunResult } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachPolicyOf } from './reach-policy.testing.js';
import { gate, type OverlayScene, overlayScene, req, until, workspacePolicy } from './scene.testing.js';

/*
 * The overlay's commit against a host that changed during the run (issue 13, attack findings 1
 * and 2) and against the deny-read list (finding 3): each a real sandboxed process under the
 * overlay, as root, the host changed by this process while the command waits at a gate.
 */

let s: OverlayScene;
beforeAll(async () => {
  s = await overlayScene();
});
afterAll(() => s.cleanup());

const sandbox = () => s.sandbox();

/**
 * Runs `script`, then lets `meanwhile` change the host while the command waits at a gate: after
 * its writes (a `ready` file in its upper layer) and before its end, whatever the machine's load.
 */
async function during(script: string, meanwhile: () => void | Promise<void>, policy = workspacePolicy(s)): Promise<SandboxRunResult> {
  const go = gate(s);
  const run = sandbox().run(req(s, ['sh', '-c', `${script}; touch ready; ${go.wait}; rm ready`], { policy }));
  try {
    await until(() => s.inUpper('ready'), 'the command wrote its ready file');
    await meanwhile();
  } catch (e) {
    // a failure here must not leave the command waiting: its `ready` would let the next test's
    // `meanwhile` run before that test's command wrote anything
    go.open();
    await run.catch(() => undefined);
    throw e;
  }
  go.open();
  return run;
}

const CONFLICT = "changed on the host during the run: the command's version was not committed";

describe('host entries changed during the run keep the host version', { timeout: 120_000 }, () => {
  it('a file only touched by the command (copy-up of its times) does not overwrite an edit made on the host meanwhile', async () => {
    writeFileSync(join(s.ws, 'g.txt'), 'orig\n');
    const r = await during('touch g.txt', () => appendFileSync(join(s.ws, 'g.txt'), 'user edit\n'));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'g.txt'), 'utf8')).toBe('orig\nuser edit\n');
  });

  it('a copy-up that changed only times (touch) is not committed at all: the host entry keeps its inode and times', async () => {
    writeFileSync(join(s.ws, 't.txt'), 'same\n');
    const before = statSync(join(s.ws, 't.txt'));
    const r = await sandbox().run(req(s, ['sh', '-c', 'touch -d 2001-01-01 t.txt'], { policy: workspacePolicy(s) }));
    expect(r.exitCode).toBe(0);
    const after = statSync(join(s.ws, 't.txt'));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(r.stderr).toBe('');
  });

  it('a file both the command and the host wrote: a conflict, by path; the host version stays', async () => {
    writeFileSync(join(s.ws, 'h.txt'), 'orig\n');
    const r = await during('echo command >> h.txt', () => writeFileSync(join(s.ws, 'h.txt'), 'user\n'));
    expect(readFileSync(join(s.ws, 'h.txt'), 'utf8')).toBe('user\n');
    expect(r.stderr).toContain(`${join(s.ws, 'h.txt')} ${CONFLICT}`);
    expect(r.deniedWrites).not.toContain(join(s.ws, 'h.txt')); // not a policy refusal: nothing to ask for
  });

  it('a file the command removed that the host edited meanwhile stays', async () => {
    writeFileSync(join(s.ws, 'k.txt'), 'orig\n');
    const r = await during('rm k.txt', () => writeFileSync(join(s.ws, 'k.txt'), 'user\n'));
    expect(readFileSync(join(s.ws, 'k.txt'), 'utf8')).toBe('user\n');
    expect(r.stderr).toContain(`${join(s.ws, 'k.txt')} ${CONFLICT}`);
  });

  it('a file the command changed that the host removed meanwhile is not put back; the command\'s version is kept aside and said', async () => {
    writeFileSync(join(s.ws, 'gone.txt'), 'orig\n');
    const r = await during('echo command >> gone.txt', () => rmSync(join(s.ws, 'gone.txt')));
    expect(existsSync(join(s.ws, 'gone.txt'))).toBe(false);
    expect(r.stderr).toContain(`${join(s.ws, 'gone.txt')} was removed or renamed on the host during the run: the command's version was not committed (it is not put back); the command's version is at `);
    const kept = /the command's version is at (\S+)\n/.exec(r.stderr)?.[1];
    expect(kept !== undefined && readFileSync(kept, 'utf8')).toBe('orig\ncommand\n');
  });

  it('a folder the host removed meanwhile, where the command changed a file: not put back, said', async () => {
    mkdirSync(join(s.ws, 'gonedir', 'deep'), { recursive: true });
    writeFileSync(join(s.ws, 'gonedir', 'deep', 'a.txt'), 'orig\n');
    const r = await during('echo command >> gonedir/deep/a.txt', () => rmSync(join(s.ws, 'gonedir'), { recursive: true }));
    expect(existsSync(join(s.ws, 'gonedir'))).toBe(false);
    expect(r.stderr).toContain(`${join(s.ws, 'gonedir')} was removed or renamed on the host during the run`);
  });

  it('a file the command renamed is committed under its new name, even where the host changed the folder it came from', async () => {
    mkdirSync(join(s.ws, 'into'), { recursive: true });
    writeFileSync(join(s.ws, 'moved.txt'), 'moved\n');
    const r = await during('mv moved.txt into/moved.txt', () => writeFileSync(join(s.ws, 'host-made.txt'), 'user\n'));
    expect(r.stderr).toBe('');
    expect(readFileSync(join(s.ws, 'into', 'moved.txt'), 'utf8')).toBe('moved\n');
    expect(existsSync(join(s.ws, 'moved.txt'))).toBe(false);
  });

  it('a file made on the host during the run under a name the command also made: the host one stays', async () => {
    const r = await during('echo command > n.txt', () => writeFileSync(join(s.ws, 'n.txt'), 'user\n'));
    expect(readFileSync(join(s.ws, 'n.txt'), 'utf8')).toBe('user\n');
    expect(r.stderr).toContain(`${join(s.ws, 'n.txt')} ${CONFLICT}`);
  });

  it('a directory replaced whole (rm -rf; mkdir) keeps host files added to it during the run, and removes the old ones', async () => {
    mkdirSync(join(s.ws, 'build'));
    writeFileSync(join(s.ws, 'build/old.o'), 'old\n');
    const r = await during('rm -rf build && mkdir build && echo new > build/x', () => writeFileSync(join(s.ws, 'build/user.txt'), 'user\n'));
    expect(r.exitCode).toBe(0);
    expect(readdirSync(join(s.ws, 'build')).sort()).toEqual(['user.txt', 'x']);
    expect(readFileSync(join(s.ws, 'build/x'), 'utf8')).toBe('new\n');
    expect(r.stderr).toContain(`${join(s.ws, 'build/user.txt')}`);
  });

  it('a directory replaced whole is replaced at every depth: old host files in its new subdirectories go too', async () => {
    mkdirSync(join(s.ws, 'rebuilt/out/sub'), { recursive: true });
    writeFileSync(join(s.ws, 'rebuilt/out/stale.o'), 'stale\n');
    writeFileSync(join(s.ws, 'rebuilt/out/sub/old'), 'old\n');
    writeFileSync(join(s.ws, 'rebuilt/top'), 'top\n');
    const r = await sandbox().run(req(s, ['sh', '-c', 'rm -rf rebuilt && mkdir -p rebuilt/out/sub && echo fresh > rebuilt/out/new.o && ls -R rebuilt'], { policy: workspacePolicy(s) }));
    expect(r.exitCode).toBe(0);
    expect(readdirSync(join(s.ws, 'rebuilt')).sort()).toEqual(['out']);
    expect(readdirSync(join(s.ws, 'rebuilt/out')).sort()).toEqual(['new.o', 'sub']);
    expect(readdirSync(join(s.ws, 'rebuilt/out/sub'))).toEqual([]);
    expect(r.stderr).toBe('');
  });

  it('a directory removed whole keeps itself and what the host added to it during the run', async () => {
    mkdirSync(join(s.ws, 'dist'));
    writeFileSync(join(s.ws, 'dist/a.js'), 'a\n');
    const r = await during('rm -rf dist', () => writeFileSync(join(s.ws, 'dist/user.js'), 'user\n'));
    expect(readdirSync(join(s.ws, 'dist')).sort()).toEqual(['a.js', 'user.js']);
    expect(r.stderr).toContain(`${join(s.ws, 'dist')} ${CONFLICT}`);
  });

  it("a folder the command filled, where the host made a file meanwhile: a conflict, and the command's whole folder is kept aside, not lost", async () => {
    const r = await during('mkdir out && for i in 1 2 3; do echo important-$i > out/r$i; done && mkdir out/deep && echo d > out/deep/e', () => writeFileSync(join(s.ws, 'out'), 'hostfile\n'));
    expect(readFileSync(join(s.ws, 'out'), 'utf8')).toBe('hostfile\n');
    const conflict = r.conflicts?.find((c) => c.path === join(s.ws, 'out'));
    expect(conflict?.keptAt).toBeDefined();
    expect(r.stderr).toContain(`the command's version is at ${conflict?.keptAt}`);
    expect(readdirSync(conflict!.keptAt!).sort()).toEqual(['deep', 'r1', 'r2', 'r3']);
    expect(readFileSync(join(conflict!.keptAt!, 'r2'), 'utf8')).toBe('important-2\n');
    expect(readFileSync(join(conflict!.keptAt!, 'deep', 'e'), 'utf8')).toBe('d\n');
  });

  it("a file the command wrote where the host made a folder meanwhile: the host's folder stays, the command's file is kept aside", async () => {
    const r = await during('echo command-file > spot', () => {
      mkdirSync(join(s.ws, 'spot'));
      writeFileSync(join(s.ws, 'spot', 'host.txt'), 'host\n');
    });
    expect(readFileSync(join(s.ws, 'spot', 'host.txt'), 'utf8')).toBe('host\n');
    const conflict = r.conflicts?.find((c) => c.path === join(s.ws, 'spot'));
    expect(conflict?.keptAt).toBeDefined();
    expect(readFileSync(conflict!.keptAt!, 'utf8')).toBe('command-file\n');
  });

  // Kept aside by text path before: a name that is not UTF-8 (\xff) and U+FFFD's own bytes were the
  // same path there, so the command's symlink `\xff` kept first led the copy of its folder
  // `\xEF\xBF\xBD/evil` through it, anywhere on the host (found by an attack: a root-owned file in a
  // cron folder). Each conflict is now one flat entry of its own in the run's folder.
  it("conflicting entries are kept aside one by one, never through a symlink of the command's", async () => {
    const target = join(s.root, 'kept-target');
    mkdirSync(target);
    const names = [Buffer.from([0xff]), Buffer.from([0xef, 0xbf, 0xbd])];
    const script = `mkdir D && ln -s ${target} "D/$(printf '\\377')" && mkdir "D/$(printf '\\357\\277\\275')" && echo payload > "D/$(printf '\\357\\277\\275')/evil"`;
    mkdirSync(join(s.ws, 'D'));
    const r = await during(script.replace('mkdir D && ', ''), () => {
      for (const name of names) writeFileSync(Buffer.concat([Buffer.from(`${s.ws}/D/`), name]), 'host\n');
    });
    expect(readdirSync(target)).toEqual([]);
    const kept = (r.conflicts ?? []).filter((c) => c.path.startsWith(join(s.ws, 'D'))).map((c) => c.keptAt);
    expect(kept).toHaveLength(2);
    for (const at of kept) expect(at).toBeDefined();
    expect(new Set(kept).size).toBe(2);
    // the symlink kept as a symlink, the folder as a folder with the command's file
    const [link, folder] = [kept.find((k) => lstatSync(k!).isSymbolicLink())!, kept.find((k) => lstatSync(k!).isDirectory())!];
    expect(readFileSync(join(folder, 'evil'), 'utf8')).toBe('payload\n');
    expect(link).toBeDefined();
    for (const name of names) expect(readFileSync(Buffer.concat([Buffer.from(`${s.ws}/D/`), name]), 'utf8')).toBe('host\n');
  });

  // The commit of an `rm -rf build` deleted the files of a folder the host bound at build during
  // the run, and wrote into a tmpfs mounted there (found by an attack). A removal never goes
  // through a mount point: the command never saw what is mounted there.
  it.skipIf(process.getuid?.() !== 0)('a removal is not carried through a file system mounted there during the run', async () => {
    const victim = join(s.root, 'mount-victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'precious'), 'keep me\n');
    mkdirSync(join(s.ws, 'mnt-build'));
    writeFileSync(join(s.ws, 'mnt-build', 'old.o'), 'old\n');
    let mounted = false;
    try {
      const r = await during('rm -rf mnt-build', () => {
        execFileSync('mount', ['--bind', victim, join(s.ws, 'mnt-build')]);
        mounted = true;
      });
      expect(readFileSync(join(victim, 'precious'), 'utf8')).toBe('keep me\n');
      expect(r.stderr).toMatch(/mnt-build could not be committed: it was not removed: a file system is mounted at .*mnt-build/);
    } finally {
      if (mounted) execFileSync('umount', [join(s.ws, 'mnt-build')]);
    }
    // what the mount covered is there as it was
    expect(readdirSync(join(s.ws, 'mnt-build'))).toEqual(['old.o']);
  });

  // Two runs in one workspace that commit at once: before, a file of one was silently replaced by
  // the other's (a rename replaces what it finds), and a new folder both made kept one run's files
  // only (the other's rename failed with ENOTEMPTY and its files were lost). Found by an attack.
  it("two runs committing at once lose nothing: a name both made is one run's file and the other's conflict; a folder both made holds both", async () => {
    const go = gate(s);
    const script = (who: string) => `mkdir both && for i in $(seq 1 400); do echo ${who} > both/${who}$i; echo ${who} > same$i; done; touch ready-${who}; ${go.wait}; rm ready-${who}`;
    const runs = ['a', 'b'].map((who) => sandbox().run(req(s, ['sh', '-c', script(who)], { policy: workspacePolicy(s) })));
    await until(() => s.inUpper('ready-a') && s.inUpper('ready-b'), 'both runs wrote their files');
    go.open();
    const [a, b] = await Promise.all(runs);
    expect([a!.exitCode, b!.exitCode]).toEqual([0, 0]);
    const inBoth = readdirSync(join(s.ws, 'both'));
    const keptBoth = [...(a!.conflicts ?? []), ...(b!.conflicts ?? [])].filter((c) => c.path.startsWith(join(s.ws, 'both')));
    // every file of both runs is in the folder, or (a run's folder met the other's first) kept aside
    for (const who of ['a', 'b']) {
      for (let i = 1; i <= 400; i++) {
        const name = `${who}${i}`;
        if (!inBoth.includes(name)) expect(keptBoth.length, `${name} is neither in the folder nor kept`).toBeGreaterThan(0);
      }
    }
    const conflictsOf = (r: SandboxRunResult) => new Set((r.conflicts ?? []).map((c) => c.path));
    const [ca, cb] = [conflictsOf(a!), conflictsOf(b!)];
    for (let i = 1; i <= 400; i++) {
      const path = join(s.ws, `same${i}`);
      const content = readFileSync(path, 'utf8');
      // the file is one run's; the other said its own version was not committed
      expect(content === 'a\n' ? cb.has(path) : content === 'b\n' ? ca.has(path) : false, `${path}: ${JSON.stringify(content)}`).toBe(true);
    }
  });

  it("a chmod of an existing folder is committed (it was dropped unsaid); one the host changed meanwhile is said, not applied", async () => {
    for (const d of ['priv', 'pub', 'busy']) mkdirSync(join(s.ws, d), { mode: 0o755 });
    execFileSync('chmod', ['755', join(s.ws, 'priv'), join(s.ws, 'pub'), join(s.ws, 'busy')]);
    const r = await during('chmod 700 priv && chmod 775 pub && chmod 711 busy', () => writeFileSync(join(s.ws, 'busy', 'host.txt'), 'host\n'));
    expect(r.exitCode).toBe(0);
    expect(statSync(join(s.ws, 'priv')).mode & 0o7777).toBe(0o700);
    expect(statSync(join(s.ws, 'pub')).mode & 0o7777).toBe(0o775);
    expect(statSync(join(s.ws, 'busy')).mode & 0o7777).toBe(0o755);
    expect(r.stderr).toContain(`${join(s.ws, 'busy')}: the command's change of its mode (to 711) was not committed`);
  });

  it('writes with no host change in between are committed as before', async () => {
    writeFileSync(join(s.ws, 'plain.txt'), 'orig\n');
    const r = await during('echo more >> plain.txt && rm -f k2.txt && echo x > fresh.txt', () => {});
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'plain.txt'), 'utf8')).toBe('orig\nmore\n');
    expect(readFileSync(join(s.ws, 'fresh.txt'), 'utf8')).toBe('x\n');
    expect(r.stderr).toBe('');
  });
});

describe('the deny-read list holds for the commit', { timeout: 120_000 }, () => {
  it('.env files and other hidden paths are never created or replaced on the host through the overlay (the real policy)', async () => {
    const policy = reachPolicyOf(s);
    mkdirSync(join(s.ws, 'pkg'), { recursive: true });
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo planted > .env.local; echo planted > pkg/.env; mkdir -p node_modules/p && echo planted > node_modules/p/.env; echo planted > .env; echo ok > ok.txt'], { policy }));
    for (const p of ['.env.local', 'pkg/.env', 'node_modules/p/.env']) expect(existsSync(join(s.ws, p)), p).toBe(false);
    expect(readFileSync(join(s.ws, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(readFileSync(join(s.ws, 'ok.txt'), 'utf8')).toBe('ok\n');
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites).toEqual(expect.arrayContaining([join(s.ws, '.env.local'), join(s.ws, 'pkg/.env'), join(s.ws, 'node_modules/p/.env')]));
    expect(r.stderr).toContain(`${join(s.ws, 'pkg/.env')} was not committed (rule: deny-read)`);
  });
});

describe('a writable root whose path holds a double quote (attack finding 7)', { timeout: 60_000 }, () => {
  it('overlay fails closed naming the character; auto falls back to the look and runs', async () => {
    const odd = join(s.root, 'odd"root');
    mkdirSync(odd);
    const policy = workspacePolicy(s, { write: [s.ws, odd, s.sessionTmp] });
    await expect(sandbox().run(req(s, ['sh', '-c', `echo ran > '${odd}/ran'`], { policy }))).rejects.toThrow(/overlay.*cannot carry .*"/s);
    expect(existsSync(join(odd, 'ran'))).toBe(false);
    const r = await s.sandbox({ hostModel: 'auto' }).run(req(s, ['sh', '-c', `echo ran > '${odd}/ran'`], { policy }));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(odd, 'ran'), 'utf8')).toBe('ran\n');
    expect(r.stderr).toMatch(/not captured in an overlay/);
  });
});

describe("the overlay's own xattrs never reach the host (attack finding 9)", { timeout: 60_000 }, () => {
  it('files changed, moved and made by the command carry no user.overlay.* xattr after the commit', async () => {
    writeFileSync(join(s.ws, 'x.txt'), 'x\n');
    mkdirSync(join(s.ws, 'mv-src'));
    writeFileSync(join(s.ws, 'mv-src/m.txt'), 'm\n');
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo more >> x.txt && mkdir -p nd && mv mv-src/m.txt nd/ && rm -rf mv-src && mkdir mv-src && echo n > mv-src/n.txt'], { policy: workspacePolicy(s) }));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'nd/m.txt'), 'utf8')).toBe('m\n');
    expect(readFileSync(join(s.ws, 'x.txt'), 'utf8')).toBe('x\nmore\n');
    const xattrs = execFileSync('getfattr', ['-R', '-P', '-m', '^user\\.overlay\\.', s.ws], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(xattrs).toBe('');
  });
});

describe("the daemon's temp directory is never readable inside the sandbox (attack finding 5)", { timeout: 60_000 }, () => {
  it("with tmpDir outside /tmp, a run cannot read another run's upper layer, nor list the run folders", async () => {
    let b: SandboxRunResult | undefined;
    // the second run starts and ends while the first waits with its write in its upper layer
    await during('echo secret-of-a > a-secret.txt', async () => {
      b = await sandbox().run(req(s, ['sh', '-c', `ls -A '${s.tmpDir}'; cat '${s.tmpDir}'/*/overlay/*/upper/a-secret.txt`], { policy: workspacePolicy(s) }));
    });
    expect(b?.stdout).not.toContain('secret-of-a');
    expect(b?.stdout).toBe('');
  });

  it('with tmpDir named through a symlink: the run runs, and the run folders are hidden at the directory the link names', async () => {
    const real = join(s.root, 'daemon-tmp-real');
    const link = join(s.root, 'daemon-tmp-link');
    mkdirSync(real);
    symlinkSync(real, link);
    const linked = s.sandbox({ tmpDir: link });
    try {
      const r = await linked.run(req(s, ['sh', '-c', `echo in-upper > linked.txt; ls -A '${real}' '${link}/'`], { policy: workspacePolicy(s) }));
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout.split('\n').filter((l) => l.startsWith('aalis-sbx-'))).toEqual([]);
      expect(readFileSync(join(s.ws, 'linked.txt'), 'utf8')).toBe('in-upper\n');
    } finally {
      await linked.close();
    }
  });

  it('a policy path inside the daemon temp directory: it cannot be hidden, so nothing runs', async () => {
    const inside = join(s.tmpDir, 'ws-inside');
    mkdirSync(inside, { recursive: true });
    const run = sandbox().run(req(s, ['sh', '-c', `echo ran > '${join(s.ws, 'ran-inside')}'`], { policy: workspacePolicy(s, { readAllowWithin: [s.sessionTmp, inside] }) }));
    await expect(run).rejects.toThrow(/temp directory .* would be visible in the sandbox/);
    expect(existsSync(join(s.ws, 'ran-inside'))).toBe(false);
  });
});

describe('what the commit cannot do is said as such (attack finding 8)', { timeout: 60_000 }, () => {
  it('a write the policy allows that fails on the host (immutable directory) is "could not be committed", not a refused write to ask for', async () => {
    const locked = join(s.ws, 'locked');
    mkdirSync(locked);
    try {
      // made immutable on the host once the command wrote: the commit's rename into it fails
      const r = await during('echo x > locked/new.txt', () => {
        execFileSync('chattr', ['+i', locked]);
      });
      expect(existsSync(join(locked, 'new.txt'))).toBe(false);
      expect(r.stderr).toContain(`${join(locked, 'new.txt')} could not be committed`);
      expect(r.deniedWrites).not.toContain(join(locked, 'new.txt'));
      expect(r.writeDenied).toBe(false);
    } finally {
      execFileSync('chattr', ['-i', locked]);
    }
  });

  it('a named pipe committed across file systems is a named pipe, not an empty file', async () => {
    const shm = '/dev/shm';
    if (statSync(shm).dev === statSync(s.ws).dev) return;
    const other = s.sandbox({ tmpDir: shm });
    const r = await other.run(req(s, ['sh', '-c', 'mkfifo -m 640 pipe'], { policy: workspacePolicy(s) }));
    expect(r.exitCode).toBe(0);
    const st = lstatSync(join(s.ws, 'pipe'));
    expect(st.isFIFO()).toBe(true);
    expect(st.mode & 0o777).toBe(0o640);
  });
});
