import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineSkip, TEST_IMAGE } from '../test/engine.js';
import { checkAsNobody } from '../test/check-as-nobody.js';
import { FSMON, git, gitTakesForRepo, HOOK, type LandingScene, landingScene, UNRELATED } from '../test/landing-scene.js';
import { DockerSandbox } from './docker-sandbox.js';

/**
 * h116: an attack on the mount plan and the check after the run (deniedWritesAfter and friends):
 * hard links, times, names (FIFOs, PATH_MAX), a check that cannot list. Each test asserts the
 * safe or kind outcome; an `it.fails` is a finding (named in its comment).
 */

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-h116', owner: { uid: 0, gid: 0 } });

const scene = (before?: (ws: string, home: string) => void) => landingScene('aalis-h116-', before);
type Scene = LandingScene;

async function runAny(_id: string, s: Scene, script: string, timeoutMs = 30_000) {
  const r = await box.run({ argv: ['sh', '-c', script], cwd: s.ws, env: {}, timeoutMs, identity: 'owner', policy: s.policy });
  return r;
}

/** Every path under `dir` named `name`, at any depth (find walks past PATH_MAX by descriptors). */
function findNamed(dir: string, name: string): string[] {
  const out = execFileSync('find', [dir, '-name', name], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '');
}

/** A shell line that puts the folder `d` under `n` more folders of 200-byte names (past PATH_MAX at about 20), every call on short paths. */
const DEEPEN = (n: number) => `L=$(printf 'a%.0s' $(seq 1 200)); i=0; while [ $i -lt ${n} ]; do mkdir t && mv d t/$L && mv t d || exit 9; i=$((i+1)); done`;

describe.skipIf(engineSkip)('h116: the plan and the check after the run (docker backend)', { timeout: 120_000 }, () => {
  // FINDING h116-F1 (hard links): a landing the plan mounts read-only (.git/hooks/pre-commit) that is
  // a hard link of a writable file (ln without -s, the way some READMEs install a hook) is written
  // through the writable name; the check after the run sees the same file (dev:ino:birth) at the
  // same path (thereBefore) and keeps it: the next host `git commit` runs the command's line.
  it('P1. a hook hard-linked from a writable script: a write through the script does not change the hook', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'scripts'));
      writeFileSync(join(ws, 'scripts', 'pre-commit'), '#!/bin/sh\necho lint\n', { mode: 0o755 });
      linkSync(join(ws, 'scripts', 'pre-commit'), join(ws, '.git', 'hooks', 'pre-commit'));
    });
    await runAny('P1', s, `echo 'touch /tmp/pwned' >> scripts/pre-commit; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, '.git', 'hooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\necho lint\n');
  });

  // FINDING h116-F1b: the same for .git/config (hard-linked from a writable gitconfig.txt): a
  // core.fsmonitor appended through the writable name stays, and the next host `git status` runs it.
  it('P2. .git/config hard-linked from a writable file: a write through it does not change the config', async () => {
    const s = scene((ws) => {
      linkSync(join(ws, '.git', 'config'), join(ws, 'gitconfig.txt'));
    });
    await runAny('P2', s, `${FSMON} >> gitconfig.txt; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  // the same for a landing outside every writable root: the person's ~/.bashrc linked into the
  // workspace (a dotfiles folder kept by hard links): its workspace name is mounted read-only
  it('P2b. ~/.bashrc hard-linked into the workspace: a write through the workspace name does not change it', async () => {
    const s = scene((ws, home) => {
      writeFileSync(join(home, '.bashrc'), 'alias ll="ls -l"\n');
      mkdirSync(join(ws, 'dotfiles'));
      linkSync(join(home, '.bashrc'), join(ws, 'dotfiles', 'bashrc'));
    });
    expect(s.policy.writeDeny.some((r) => 'path' in r && r.path === join(s.home, '.bashrc'))).toBe(true);
    await runAny('P2b', s, `echo 'touch /tmp/pwned' >> dotfiles/bashrc; ${UNRELATED}`);
    expect(readFileSync(join(s.home, '.bashrc'), 'utf8')).toBe('alias ll="ls -l"\n');
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
  });

  it('P3. ln from a read-only-mounted .git/config to a writable name fails (EXDEV), nothing lands', async () => {
    const s = scene();
    await runAny('P3', s, `ln .git/config cfg 2>&1; ls -la cfg 2>&1; ${FSMON} >> cfg; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  it('P4. a new .envrc made as a hard link to a writable file is removed; the writable file stays', async () => {
    const s = scene();
    await runAny('P4', s, `echo 'source_env /tmp/evil' > x && ln x .envrc; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
    expect(existsSync(join(s.ws, 'x'))).toBe(true);
  });

  it('P5. a new folder with an .envrc (shallow) is removed', async () => {
    const s = scene();
    await runAny('P5', s, `mkdir q && echo 'PATH_add /tmp/evil' > q/.envrc; ${UNRELATED}`);
    expect(findNamed(s.ws, '.envrc')).toEqual([]);
  });

  // FINDING h116-F2 (fail open past PATH_MAX): a tree moved below 4096 bytes of path by renames
  // of short names: deniedWritesAfter's walk cannot list it (ENAMETOOLONG), only notes it as
  // unlisted (writeDenied false), and the .envrc and the nested repository's hook in it stay.
  it('P6. an .envrc and a nested repository\'s hook moved deeper than PATH_MAX (by renames of short names) are removed (or the deep tree is)', async () => {
    const s = scene();
    const r = await runAny('P6', s, `${UNRELATED}; mkdir -p d/r/.git/hooks && ${HOOK} > d/r/.git/hooks/pre-commit && chmod +x d/r/.git/hooks/pre-commit && echo 'PATH_add /tmp/evil' > d/.envrc && ${DEEPEN(22)} && mv d deep`);
    expect(findNamed(s.ws, '.envrc')).toEqual([]);
    expect(findNamed(s.ws, 'pre-commit')).toEqual([]);
    expect(r.writeDenied).toBe(true);
  });

  it('P7. a FIFO left where a landing is read (.envrc, a new repository\'s config, a bare HEAD) does not hang the check', async () => {
    const s = scene();
    const t0 = Date.now();
    await runAny('P7', s, `mkfifo .envrc; mkdir -p n/.git/objects n/.git/refs && echo 'ref: refs/heads/main' > n/.git/HEAD && mkfifo n/.git/config n/.git/commondir; mkdir -p b/objects b/refs && mkfifo b/HEAD b/config; mkdir -p e && mkfifo e/.envrc; ${UNRELATED}`);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
  });

  it('P8. a folder of mode 000 holding a new .envrc is still checked (the daemon is root here)', async () => {
    const s = scene();
    const r = await runAny('P8', s, `mkdir q && echo 'PATH_add /tmp/evil' > q/.envrc && chmod 000 q; ${UNRELATED}`);
    expect(findNamed(s.ws, '.envrc')).toEqual([]);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('P9. a file with its times set back (touch -d) in a nested repository\'s hooks folder named after the run is removed', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
    });
    await runAny('P9', s, `mv sub sub3 && ${HOOK} > sub3/.git/hooks/pre-commit && chmod +x sub3/.git/hooks/pre-commit && touch -d '2001-01-01 00:00' sub3/.git/hooks/pre-commit; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub3', '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('P10. an executable hook written in a new folder and the folder renamed into a moved repository\'s hooks place does not land (the read-only hooks mount moves with the repository)', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      chmodSync(join(ws, 'sub'), 0o755);
    });
    await runAny('P10', s, `mkdir hk && ${HOOK} > hk/pre-commit && chmod +x hk/pre-commit && mv sub sub3 && rm -rf sub3/.git/hooks && mv hk sub3/.git/hooks; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub3', '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('P10b. P10\'s samples: the person\'s hooks of a moved repository stay (the refused rm is only reported)', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
    });
    await runAny('P10b', s, `mv sub sub3 && rm -rf sub3/.git/hooks; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub3', '.git', 'hooks', 'pre-commit.sample'))).toBe(true);
  });

  it('P11. a folder of the person\'s moved into a nested repository\'s missing hooks place: the hook does not land (the folder is deleted, the person\'s file with it: the command could have removed it as well)', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      execFileSync('rm', ['-rf', join(ws, 'sub', '.git', 'hooks')]);
      mkdirSync(join(ws, 'tools'));
      writeFileSync(join(ws, 'tools', 'pre-commit'), '#!/bin/sh\necho person\n', { mode: 0o755 });
    });
    await runAny('P11', s, `mv tools sub/.git/hooks; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('P12. a command past its deadline that ignores TERM writes nothing after the run returned', async () => {
    const s = scene();
    await runAny('P12', s, `trap '' TERM INT; ${UNRELATED}; sleep 5; echo 'PATH_add /tmp/evil' > .envrc`, 1_500);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
  });

  it('P12b. a landing written before the deadline kill is removed all the same', async () => {
    const s = scene();
    const r = await runAny('P12b', s, `trap '' TERM INT; echo 'PATH_add /tmp/evil' > .envrc; mkdir q && echo x > q/.envrc; ${UNRELATED}; sleep 30`, 1_500);
    expect(r.timedOut).toBe(true);
    expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
    expect(existsSync(join(s.ws, 'q', '.envrc'))).toBe(false);
  });

  it('P13. the bare-repository disguise under a folder whose name is not UTF-8 does not land (its HEAD is removed)', async () => {
    const s = scene();
    await runAny('P13', s, `D=$(printf 'b\\377'); mkdir -p "$D/objects" "$D/refs" && echo 'ref: refs/heads/main' > "$D/HEAD" && ${FSMON} > "$D/config"; ${UNRELATED}`);
    // its config stays, but without the HEAD git takes the folder for no repository
    const heads = findNamed(s.ws, 'HEAD').filter((p) => !p.includes('/.git/'));
    expect(heads).toEqual([]);
  });


  // FINDING h116-F3 (fail open, non-root daemon): a folder the command made and closed to listing
  // (chmod 111: no read bit, still enterable) is only noted as unlisted by deniedWritesAfter; the
  // .envrc in it stays on the host and direnv (which opens it by name) loads it at the next `cd q`.
  it('P8b. a daemon that is not root: a folder the command made and closed to listing (chmod 111) holding a new .envrc is removed, not only noted', () => {
    const s = scene();
    const after = checkAsNobody(s, `mkdir q && echo 'PATH_add /tmp/evil' > q/.envrc && chmod 111 q`);
    // the daemon, the folder's owner, opens it again and judges what is in it
    expect(after.unlisted).toEqual([]);
    expect(after.denied).toContain(join(s.ws, 'q', '.envrc'));
    expect(after.failed).toEqual([]);
    expect(after.readBack).toBe('ENOENT');
  });

  // FINDING h116-F3b: the same on the workspace itself (a bind mount's root can be chmod'ed by its
  // owner): with the workspace closed to listing nothing under it is checked, the new .envrc at its
  // top stays, and the person's `cd project` (x bit kept) runs it through direnv.
  it('P8c. a daemon that is not root: the workspace itself closed to listing (chmod 311 .) leaves no landing write unchecked', () => {
    const s = scene();
    const after = checkAsNobody(s, `echo 'PATH_add /tmp/evil' > .envrc && mkdir q && cp .envrc q/.envrc && chmod 311 .`);
    expect(after.denied).toContain(join(s.ws, '.envrc'));
  });

  it('P7b. FIFOs and loops the check reads in a nested repository (commondir to a folder whose config is a FIFO, config.worktree a FIFO, a self-looping link) do not hang it', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
    });
    const t0 = Date.now();
    const r = await runAny('P7b', s, `mkdir -p evil/hooks && mkfifo evil/config && echo ../../evil > sub/.git/commondir; mkfifo sub/.git/config.worktree; ln -s loop sub/loop; ln -s .envrc .envrc; mkdir n && ln -s .git n/.git; ${UNRELATED}`);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(existsSync(join(s.ws, 'sub', '.git', 'commondir'))).toBe(false);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  // FINDING h116-F3c: the same daemon, the .envrc listed and found, but its folder closed to
  // writing (chmod 555): removeAll cannot unlink it, the run says so, and the landing stays.
  it('P8d. a daemon that is not root: a new .envrc in a folder the command closed to writing (chmod 555) is found and removed', () => {
    const s = scene();
    const after = checkAsNobody(s, `mkdir q && echo 'PATH_add /tmp/evil' > q/.envrc && chmod 555 q`);
    expect(after.denied).toContain(join(s.ws, 'q', '.envrc'));
    expect(after.readBack).toBe('ENOENT');
  });

  // FINDING h116-F4 (a new folder the read rules hide is never walked): a folder the command made
  // whose name a read-deny pattern matches (`.env*`: `.env.d`, `.envs`, a venv named `.env`) is
  // not masked in the container (it was not there when the plan was made), so what the command
  // writes in it lands on the host; but deniedWritesAfter's walk (and writesUnderLaterLandings')
  // does not descend where plan.modeAt says 'masked'. Under it, an .envrc, a bare-repository
  // disguise with a config, and a nested repository's hook all stay, and the run says nothing
  // (writeDenied false). The same in a plain folder (P5, P7) is removed.
  it('P15. landings written under a new folder named like a read-denied .env* (.env.d) are judged and removed', async () => {
    const s = scene();
    const r = await runAny('P15', s, `mkdir -p .env.d/r/.git/hooks .env.d/r/.git/objects .env.d/r/.git/refs .env.d/b/objects .env.d/b/refs && ${HOOK} > .env.d/r/.git/hooks/pre-commit && chmod +x .env.d/r/.git/hooks/pre-commit && echo 'ref: refs/heads/main' > .env.d/r/.git/HEAD && echo 'ref: refs/heads/main' > .env.d/b/HEAD && ${FSMON} > .env.d/b/config && echo 'PATH_add /tmp/evil' > .env.d/.envrc; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.env.d', '.envrc'))).toBe(false);
    expect(gitTakesForRepo(join(s.ws, '.env.d', 'b'))).toBe(false);
    expect(existsSync(join(s.ws, '.env.d', 'r', '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(r.writeDenied).toBe(true);
  });

  // FINDING h116-F4b: the same with a file the person's own .envrc loads: `source_env .env.d/dev.sh`
  // is a landing (mainDirLandings protects it by path), but `.env.d` was not there at the plan, so
  // the command makes it and writes dev.sh in it; the check never descends into `.env.d` and the
  // file stays. direnv, already allowed for that .envrc (its allow is by the .envrc's content),
  // sources it at the person's next `cd`.
  it('P16. a file the person\'s .envrc sources from a .env* folder not yet there (source_env .env.d/dev.sh) does not land', async () => {
    const s = scene((ws) => {
      writeFileSync(join(ws, '.envrc'), 'source_env .env.d/dev.sh\n');
    });
    expect(s.policy.writeDeny.some((r) => 'path' in r && r.path === join(s.ws, '.env.d', 'dev.sh'))).toBe(true);
    await runAny('P16', s, `mkdir .env.d && echo 'touch /tmp/pwned' > .env.d/dev.sh; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.env.d', 'dev.sh'))).toBe(false);
  });

  // FINDING h116-F5 (the check is quadratic): deniedWritesAfter dedupes writesUnderLaterLandings'
  // (and shadowingLinks') entries against `denied` with `denied.some(… Buffer.equals)` per entry.
  // A command that makes N folders, each with an .envrc (N denied), and has its workspace protected
  // whole after the run (an .envrc at the top that is a FIFO, or names a variable: the
  // workspace's .git is a write root, so that .envrc is read as one above it) costs N×N
  // comparisons: measured in-process 2 000 → 0.27 s, 8 000 → 2.0 s, 30 000 → 26 s; here, on the
  // real run's plan, 20 000 → about 10 s. The hold (every container writing there paused, every
  // other run's set-up and check on the engine waiting, refused past 120 s) lasts as long.
  it('P17. 20 000 denied .envrc files and a workspace protected whole after the run: the check on the run\'s plan takes under 3 s', { timeout: 300_000 }, async () => {
    const s = scene();
    let took = -1;
    const sweep = box.sweepDenied.bind(box);
    box.sweepDenied = async (plan, containers) => {
      const { deniedWritesAfter } = await import('./mount-plan.js');
      const t1 = Date.now();
      await deniedWritesAfter(plan);
      took = Date.now() - t1;
      const out = await sweep(plan, containers);
      return out;
    };
    try {
      await runAny('P17', s, `mkfifo .envrc; seq 0 19999 | sed 's/^/d/' | xargs mkdir && seq 0 19999 | sed 's|.*|d&/.envrc|' | xargs touch; ${UNRELATED}`, 200_000);
    } finally {
      box.sweepDenied = sweep;
    }
    expect(took).toBeGreaterThanOrEqual(0);
    expect(took).toBeLessThan(3_000);
  });

  // FINDING h116-F4c: F4b in its common shape: a virtualenv named `.env`, activated by the
  // person's .envrc (`source .env/bin/activate`), not yet made (a fresh clone; the command is the
  // one asked to make it). The command's .env/bin/activate stays, and direnv sources it at the
  // person's next `cd`.
  it('P16b. a virtualenv .env the person\'s .envrc activates (source .env/bin/activate), made by the command: its activate script does not land', async () => {
    const s = scene((ws) => {
      writeFileSync(join(ws, '.envrc'), 'source .env/bin/activate\n');
    });
    expect(s.policy.writeDeny.some((r) => 'path' in r && r.path === join(s.ws, '.env', 'bin', 'activate'))).toBe(true);
    await runAny('P16b', s, `mkdir -p .env/bin && echo 'touch /tmp/pwned' > .env/bin/activate; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.env', 'bin', 'activate'))).toBe(false);
  });

  // h115's U3 on this backend: a host file naming a landing by bytes that are not UTF-8. The
  // readers now keep the bytes (core decodeHostText), so this walk names such an entry as they do
  // (decodeName); with U+FFFD on both sides it matched by chance, and any other stray byte too.
  it('U3d. a nested repository whose core.hooksPath is hk\\xff (missing): the command\'s hook there is removed', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      appendFileSync(join(ws, 'sub', '.git', 'config'), Buffer.concat([Buffer.from('[core]\n\thooksPath = hk'), Buffer.of(0xff), Buffer.from('\n')]));
    });
    const r = await runAny('U3d', s, `d="sub/hk$(printf '\\377')"; mkdir -p "$d" && ${HOOK} > "$d/pre-commit" && chmod +x "$d/pre-commit"; ${UNRELATED}`);
    expect(existsSync(Buffer.concat([Buffer.from(join(s.ws, 'sub', 'hk')), Buffer.of(0xff), Buffer.from('/pre-commit')])), r.stderr).toBe(false);
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
  });

  // h115's E7 on this backend: a node_modules/.bin on the person's PATH (`PATH_add
  // node_modules/.bin`) stays the installs', but not under the names the person types
  it('E7d. PATH_add node_modules/.bin: the command\'s node_modules/.bin/git is removed, its node_modules/.bin/tsc stays', async () => {
    const s = scene((ws) => {
      writeFileSync(join(ws, '.envrc'), 'PATH_add node_modules/.bin\n');
    });
    await runAny('E7d', s, `mkdir -p node_modules/.bin && ${HOOK} > node_modules/.bin/git && echo tsc > node_modules/.bin/tsc; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'node_modules', '.bin', 'git'))).toBe(false);
    expect(existsSync(join(s.ws, 'node_modules', '.bin', 'tsc'))).toBe(true);
  });

  it('P16c. the same with the virtualenv named .venv (no read rule on its name): the activate script is removed', async () => {
    const s = scene((ws) => {
      writeFileSync(join(ws, '.envrc'), 'source .venv/bin/activate\n');
    });
    await runAny('P16c', s, `mkdir -p .venv/bin && echo 'touch /tmp/pwned' > .venv/bin/activate; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.venv', 'bin', 'activate'))).toBe(false);
  });
});
