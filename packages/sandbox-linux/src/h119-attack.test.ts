import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mainDirLandings, reachPolicyOf } from './reach-policy.testing.js';
import { gate, makeScene, overlayScene, type OverlayScene, req, type Scene, until, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * h119: attacks on the commit's two passes (additions first, removals last: upper-commit.ts
 * runLater, a replaced entry renamed aside to `.aalis-replaced-*`), and timings of big removals.
 */

const scenes: OverlayScene[] = [];
const dirs: string[] = [];
const plain: string[] = [];
afterAll(() => {
  if (scenes.length + dirs.length + plain.length > 0) execFileSync('rm', ['-rf', ...scenes.map((s) => s.root), ...dirs, ...plain]);
});

async function scene(): Promise<OverlayScene> {
  const s = await overlayScene();
  scenes.push(s);
  return s;
}

/** Names anywhere under `dir` that start `.aalis-` (a commit's temp or aside left behind). */
const leftovers = (dir: string) => execFileSync('find', [dir, '-name', '.aalis-*'], { encoding: 'latin1' }).trim();

async function runIn(s: OverlayScene, script: string, timeoutMs = 120_000) {
  const sb = s.sandbox();
  try {
    const t0 = Date.now();
    const r = await sb.run(req(s, ['sh', '-c', script], { policy: workspacePolicy(s), timeoutMs }));
    return { r, ms: Date.now() - t0 };
  } finally {
    await sb.close();
  }
}

/** `script`, then how long it took in ms on stdout (the rest of a run's time is its setup and commit). */
const timed = (script: string) => `t0=$(date +%s%N); ${script}; rc=$?; echo $(( ($(date +%s%N) - t0) / 1000000 )); exit $rc`;

/** `n` host files under `root`, `per` to a folder. */
function manyFiles(root: string, n: number, per: number): void {
  for (let i = 0; i < n; i++) {
    const d = join(root, `d${Math.floor(i / per)}`);
    if (i % per === 0) mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.txt`), `${i}\n`);
  }
}

describe('h119: big removals commit in reasonable time (20k deletions)', { timeout: 300_000 }, () => {
  it('T1. `rm -rf big` of 20k files in 200 folders: gone from the host', async () => {
    const s = await scene();
    manyFiles(join(s.ws, 'big'), 20_000, 100);
    const { r, ms } = await runIn(s, timed('rm -rf big'));
    console.log(`h119 T1: exit=${r.exitCode} ms=${ms} command ms=${r.stdout.trim()} stderr=${JSON.stringify(r.stderr.slice(0, 300))}`);
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(s.ws, 'big'))).toBe(false);
  });

  it('T2. `find big -type f -delete` (20k whiteouts, the 200 folders kept): every file gone, the folders kept', async () => {
    const s = await scene();
    manyFiles(join(s.ws, 'big'), 20_000, 100);
    const { r, ms } = await runIn(s, timed('find big -type f -delete'));
    console.log(`h119 T2: exit=${r.exitCode} ms=${ms} command ms=${r.stdout.trim()} stderr=${JSON.stringify(r.stderr.slice(0, 300))}`);
    expect(r.exitCode).toBe(0);
    expect(readdirSync(join(s.ws, 'big'))).toHaveLength(200);
    expect(execFileSync('find', [join(s.ws, 'big'), '-type', 'f'], { encoding: 'utf8' }).trim()).toBe('');
  });

  it('T3. 20k deletions interleaved with 10k subfolders 30 folders deep (the second pass reaching a folder again at every step): every file gone', async () => {
    const s = await scene();
    const deep = join(s.ws, ...Array.from({ length: 30 }, (_, i) => `l${i}`));
    mkdirSync(deep, { recursive: true });
    for (let i = 0; i < 10_000; i++) {
      writeFileSync(join(deep, `f${i}`), 'x');
      mkdirSync(join(deep, `s${i}`));
      writeFileSync(join(deep, `s${i}`, 'g'), 'y');
    }
    const { r, ms } = await runIn(s, timed(`find ${deep.slice(s.ws.length + 1)} -type f -delete`));
    console.log(`h119 T3: exit=${r.exitCode} ms=${ms} command ms=${r.stdout.trim()} stderr=${JSON.stringify(r.stderr.slice(0, 300))}`);
    expect(r.exitCode).toBe(0);
    expect(execFileSync('find', [deep, '-type', 'f'], { encoding: 'utf8' }).trim()).toBe('');
  });

  it('T4. `git checkout` of a branch that deletes 5k files and changes 5k: the host worktree matches the branch', async () => {
    const s = await scene();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, GIT_CONFIG_NOSYSTEM: '1' };
    manyFiles(join(s.ws, 'w'), 10_000, 100);
    const G = ['-c', 'user.name=a', '-c', 'user.email=a@b', '-c', 'commit.gpgsign=false'];
    execFileSync('git', [...G, 'add', '-A', 'w'], { cwd: s.ws, env });
    execFileSync('git', [...G, 'commit', '-qm', 'base'], { cwd: s.ws, env });
    execFileSync('git', [...G, 'checkout', '-qb', 'other'], { cwd: s.ws, env });
    execFileSync('sh', ['-c', 'for d in w/d[0-4]?; do rm -f $d/*; done; for d in w/d[5-9]?; do for f in $d/*; do echo changed > $f; done; done'], { cwd: s.ws, env });
    execFileSync('git', [...G, 'commit', '-qam', 'other'], { cwd: s.ws, env });
    execFileSync('git', [...G, 'checkout', '-q', 'master'], { cwd: s.ws, env });
    const { r, ms } = await runIn(s, timed('git checkout -q other'));
    console.log(`h119 T4: exit=${r.exitCode} ms=${ms} command ms=${r.stdout.trim()} stderr=${JSON.stringify(r.stderr.slice(0, 300))}`);
    expect(r.exitCode).toBe(0);
    expect(execFileSync('git', ['status', '--porcelain', '-uno'], { cwd: s.ws, env, encoding: 'utf8' }).trim()).toBe('');
    expect(execFileSync('git', ['branch', '--show-current'], { cwd: s.ws, env, encoding: 'utf8' }).trim()).toBe('other');
  });
});

describe('h119: entries replaced by one of another type (renamed aside, removed in the second pass)', { timeout: 180_000 }, () => {
  it('A1. a host file x replaced by a folder, a host folder d (3 files) replaced by a file: both land, nothing `.aalis-*` left', async () => {
    const s = await scene();
    writeFileSync(join(s.ws, 'x'), 'host x\n');
    manyFiles(join(s.ws, 'd'), 3, 3);
    const { r } = await runIn(s, 'rm x && mkdir x && echo new > x/f && rm -rf d && echo file > d');
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'x', 'f'), 'utf8')).toBe('new\n');
    expect(readFileSync(join(s.ws, 'd'), 'utf8')).toBe('file\n');
    expect(leftovers(s.ws)).toBe('');
  });

  it('A2. a host folder d replaced by a file while the host adds d/new during the run: a conflict, the host\'s d kept whole, nothing `.aalis-*` left', async () => {
    const s = await scene();
    manyFiles(join(s.ws, 'd'), 3, 3);
    const open = gate(s);
    const sb = s.sandbox();
    try {
      const run = sb.run(req(s, ['sh', '-c', `rm -rf d && echo file > d && touch started && ${open.wait}`], { policy: workspacePolicy(s), timeoutMs: 60_000 }));
      await until(() => s.inUpper('started'), 'the command replaced d');
      writeFileSync(join(s.ws, 'd', 'd0', 'new'), 'host\n');
      open.open();
      const r = await run;
      console.log(`h119 A2: exit=${r.exitCode} stderr=${JSON.stringify(r.stderr.slice(0, 600))}`);
    } finally {
      await sb.close();
    }
    expect(lstatSync(join(s.ws, 'd')).isDirectory()).toBe(true);
    expect(readdirSync(join(s.ws, 'd', 'd0')).sort()).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'new']);
    expect(leftovers(s.ws)).toBe('');
  });

  it('A3. the command deletes src/a.txt while the host edits it during the run: the host\'s edit kept', async () => {
    const s = await scene();
    const open = gate(s);
    const sb = s.sandbox();
    let stderr = '';
    try {
      const run = sb.run(req(s, ['sh', '-c', `rm src/a.txt && touch started && ${open.wait}`], { policy: workspacePolicy(s), timeoutMs: 60_000 }));
      await until(() => s.inUpper('started'), 'the command deleted src/a.txt');
      writeFileSync(join(s.ws, 'src', 'a.txt'), 'host edit\n');
      open.open();
      stderr = (await run).stderr;
    } finally {
      await sb.close();
    }
    console.log(`h119 A3: stderr=${JSON.stringify(stderr.slice(0, 400))}`);
    expect(readFileSync(join(s.ws, 'src', 'a.txt'), 'utf8')).toBe('host edit\n');
  });

  it('A4. names `.aalis-replaced-*` and `.aalis-commit-*` the command makes itself (next to an entry it replaces): committed as its own, and a next daemon start leaves them', async () => {
    const s = await scene();
    writeFileSync(join(s.ws, 'x'), 'host x\n');
    const { r } = await runIn(s, "rm x && mkdir x && echo new > x/f && echo mine > .aalis-replaced-000000000000 && mkdir .aalis-replaced-aaaaaaaaaaaa && echo mine > .aalis-replaced-aaaaaaaaaaaa/f && echo mine > .aalis-commit-000000000000 && echo mine > x/.aalis-replaced-ffffffffffff");
    expect(r.exitCode).toBe(0);
    const sb = s.sandbox(); // the next start sweeps
    const r2 = await sb.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    await sb.close();
    console.log(`h119 A4: stderr=${JSON.stringify((r.stderr + r2.stderr).slice(0, 400))}`);
    expect(readFileSync(join(s.ws, '.aalis-replaced-000000000000'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(s.ws, '.aalis-replaced-aaaaaaaaaaaa', 'f'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(s.ws, '.aalis-commit-000000000000'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(s.ws, 'x', '.aalis-replaced-ffffffffffff'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(s.ws, 'x', 'f'), 'utf8')).toBe('new\n');
  });
});

describe('h119: removals in a folder whose mode the command narrowed (the mode set after them)', { timeout: 120_000 }, () => {
  it('A5. `rm d/x; chmod 555 d` and `rm -rf e; mkdir e; echo n > e/n; chmod 500 e`: the removals land, then the modes', async () => {
    const s = await scene();
    manyFiles(join(s.ws, 'd'), 3, 3);
    manyFiles(join(s.ws, 'e'), 3, 3);
    const { r } = await runIn(s, 'rm d/d0/f0.txt && chmod 555 d/d0 && rm -rf e && mkdir e && echo n > e/n && chmod 500 e');
    console.log(`h119 A5: exit=${r.exitCode} stderr=${JSON.stringify(r.stderr.slice(0, 400))}`);
    expect(readdirSync(join(s.ws, 'd', 'd0')).sort()).toEqual(['f1.txt', 'f2.txt']);
    expect((lstatSync(join(s.ws, 'd', 'd0')).mode & 0o777).toString(8)).toBe('555');
    expect(readdirSync(join(s.ws, 'e'))).toEqual(['n']);
    expect((lstatSync(join(s.ws, 'e')).mode & 0o777).toString(8)).toBe('500');
    execFileSync('chmod', ['-R', 'u+rwx', join(s.ws, 'd'), join(s.ws, 'e')]);
  });
});

describe('h119: the host swaps a folder for a symlink between the passes', { timeout: 180_000 }, () => {
  /*
   * Six host folders out0..out5, each losing victim.txt in the command, between 1000 added files
   * each (layers on /dev/shm: copied one by one, a long first pass); the command also replaces a
   * host folder m<k> by a file next to each, whose `.aalis-replaced-*` tells the test the walk has
   * gone past it. From then on a host loop swaps every out<k> for a symlink to a folder outside the
   * workspace holding a victim.txt: the removals of the outs already walked are pending (the
   * second pass reaches them again by descriptors, checking each folder's identity), the others
   * are met swapped by the walk itself.
   */
  it('S1. nothing outside the workspace is removed through the links, no stack trace', async () => {
    const s = await scene();
    const K = [0, 1, 2, 3, 4, 5];
    for (const k of K) {
      mkdirSync(join(s.root, `elsewhere${k}`));
      writeFileSync(join(s.root, `elsewhere${k}`, 'victim.txt'), 'outside\n');
      mkdirSync(join(s.ws, `out${k}`));
      writeFileSync(join(s.ws, `out${k}`, 'victim.txt'), 'v\n');
      mkdirSync(join(s.ws, `m${k}`));
    }
    const shm = mkdtempSync('/dev/shm/aalis-h119-');
    dirs.push(shm);
    const sb = s.sandbox({ tmpDir: shm });
    let r: Awaited<ReturnType<ReturnType<OverlayScene['sandbox']>['run']>>;
    let loop: ReturnType<typeof spawn> | undefined;
    let seen = false;
    try {
      const run = sb.run(req(s, ['sh', '-c', 'for a in 0 1 2 3 4 5; do mkdir add$a; i=0; while [ $i -lt 1000 ]; do echo $i > add$a/f$i; i=$((i+1)); done; rm out$a/victim.txt; rmdir m$a && echo f > m$a; done'], { policy: workspacePolicy(s), timeoutMs: 120_000 }));
      let done = false;
      void run.then(() => (done = true));
      while (!readdirSync(s.ws).some((n) => n.startsWith('.aalis-replaced-')) && !done) await new Promise((res) => setTimeout(res, 1));
      seen = !done;
      const swap = K.map((k) => `mv out${k} out${k}.real && ln -s ../elsewhere${k} out${k}`).join('; ');
      const back = K.map((k) => `rm out${k}; mv out${k}.real out${k}`).join('; ');
      loop = spawn('sh', ['-c', `while :; do ${swap}; ${back}; done`], { cwd: s.ws, stdio: 'ignore' });
      r = await run;
    } finally {
      if (loop !== undefined) {
        loop.kill('SIGKILL');
        await new Promise((res) => loop!.once('exit', res));
      }
      await sb.close();
    }
    for (const k of K) {
      const n = `out${k}`;
      if (lstatSync(join(s.ws, n), { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(join(s.ws, n));
      if (existsSync(join(s.ws, `${n}.real`))) renameSync(join(s.ws, `${n}.real`), join(s.ws, n));
    }
    const outs = K.map((k) => readdirSync(join(s.ws, `out${k}`)).length);
    console.log(`h119 S1: aside seen=${seen} victims left in out0..5=${JSON.stringify(outs)} stderr=${JSON.stringify(r.stderr.slice(0, 900))}`);
    expect(seen).toBe(true);
    for (const k of K) expect(readdirSync(join(s.root, `elsewhere${k}`))).toEqual(['victim.txt']);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

const killChild = join(import.meta.dirname, 'h115-kill.child.testing.ts');

describe('h119: a daemon killed between the passes, a host folder renamed aside', { timeout: 300_000 }, () => {
  /*
   * The command replaces the host folder d (2000 files) by a file and adds 3000 files (the layers
   * on /dev/shm: copied one by one, a long first pass). The daemon is killed once d has been
   * renamed aside (`.aalis-replaced-*` in the workspace); the next start recovers.
   */
  it('K1. killed once d is aside: after the next start, d is the command\'s file or the host\'s whole folder, and no host file is lost', async () => {
    const s = await scene();
    manyFiles(join(s.ws, "d"), 2000, 2000);
    const tmpDir = mkdtempSync('/dev/shm/aalis-h119-');
    dirs.push(tmpDir);
    const { execa } = await import('execa');
    const child = execa(process.execPath, ['--import', 'tsx', killChild, JSON.stringify(s), tmpDir, 'rm -rf d && echo file > d && mkdir add && i=0; while [ $i -lt 3000 ]; do echo $i > add/f$i; i=$((i+1)); done'], { cwd: join(import.meta.dirname, '..'), reject: false });
    let ended = false;
    void child.then(() => (ended = true));
    const end = Date.now() + 120_000;
    const aside = () => readdirSync(s.ws).filter((n) => n.startsWith('.aalis-replaced-'));
    while (aside().length === 0 && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    const seen = `aside=${aside().length} d=${lstatSync(join(s.ws, 'd'), { throwIfNoEntry: false })?.isFile() ? 'file' : 'dir/none'} add=${existsSync(join(s.ws, 'add')) ? readdirSync(join(s.ws, 'add')).length : 0}`;
    child.kill('SIGKILL');
    const { stdout } = await child;
    const next = s.sandbox({ tmpDir });
    const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    await next.close();
    const st = lstatSync(join(s.ws, 'd'), { throwIfNoEntry: false });
    const left = aside();
    const hostFiles = new Set([...(st?.isDirectory() ? readdirSync(join(s.ws, 'd', 'd0')) : []), ...left.flatMap((a) => (existsSync(join(s.ws, a, 'd0')) ? readdirSync(join(s.ws, a, 'd0')) : []))]);
    console.log(`h119 K1: at kill ${seen}; finished=${stdout.includes('committed')} d=${st?.isFile() ? 'file' : st?.isDirectory() ? `dir(${hostFiles.size})` : 'none'} left=${JSON.stringify(left)} next stderr=${JSON.stringify(r.stderr.slice(0, 500))}`);
    expect(st?.isFile() === true ? readFileSync(join(s.ws, 'd'), 'utf8') === 'file\n' : hostFiles.size === 2000).toBe(true);
    if (st?.isFile() !== true) expect(hostFiles.size).toBe(2000);
  });
});

const gitEnv = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' });
/** A program that touches `mark` when run. */
const program = (mark: string) => `printf '#!/bin/sh\\ntouch ${mark}\\n'`;
function hostGit(s: Scene, cwd: string, ...args: string[]): void {
  try {
    execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', ...args], { cwd, stdio: 'pipe', env: gitEnv(s.home) });
  } catch {
    // the mark tells
  }
}

/** A run under the daemon-like policy (h115's runDaemonLike), built after the host's setup. */
async function runDaemonLike(id: string, s: Scene, script: string) {
  const policy = reachPolicyOf(s, { extraLandings: mainDirLandings(s.ws, s.home) });
  const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
  try {
    const r = await sb.run(req(s, ['sh', '-c', script], { policy, timeoutMs: 60_000 }));
    console.log(`h119 ${id}: exit=${r.exitCode} denied=${JSON.stringify(r.deniedWrites?.map((d) => (typeof d === 'string' ? d : JSON.stringify(d)).replace(s.ws, '')))} stderr=${JSON.stringify(r.stderr.slice(0, 600))}`);
    return r;
  } finally {
    await sb.close();
  }
}

/*
 * (c) A host file that is not UTF-8 as a whole (a 0xff byte in a comment) naming a landing whose
 * name IS UTF-8 (`é`): decodeHostText turns every byte past ASCII into a lone surrogate, é's two
 * bytes too; canonicalHostPath must give the walks' name (`é`) back.
 */
const XFF_COMMENT = Buffer.concat([Buffer.from('# '), Buffer.of(0xff), Buffer.from('\n')]);
describe('h119: host files not UTF-8 as a whole naming UTF-8 landings', { timeout: 120_000 }, () => {
  it('M1. the workspace .envrc (a 0xff comment) says `source_env lé.sh` (missing): the command\'s lé.sh does not land', async () => {
    const s = makeScene();
    plain.push(s.root);
    writeFileSync(join(s.ws, '.envrc'), Buffer.concat([XFF_COMMENT, Buffer.from('source_env lé.sh\n')]));
    await runDaemonLike('M1', s, "echo 'touch /tmp/pwned' > lé.sh");
    expect(existsSync(join(s.ws, 'lé.sh'))).toBe(false);
  });

  it('M2. a nested repository\'s config (a 0xff comment) has core.hooksPath = hé/hk (missing): no hook lands, the host\'s next commit runs none', async () => {
    const s = makeScene();
    plain.push(s.root);
    const mark = join(s.root, 'pwned-M2');
    execFileSync('git', ['init', '-q', 'sub'], { cwd: s.ws, env: gitEnv(s.home) });
    writeFileSync(join(s.ws, 'sub', '.git', 'config'), Buffer.concat([readFileSync(join(s.ws, 'sub', '.git', 'config')), XFF_COMMENT, Buffer.from('[core]\n\thooksPath = hé/hk\n')]));
    await runDaemonLike('M2', s, `mkdir -p sub/hé/hk && ${program(mark)} > sub/hé/hk/pre-commit && chmod +x sub/hé/hk/pre-commit`);
    hostGit(s, join(s.ws, 'sub'), 'commit', '-q', '--allow-empty', '-m', 'x');
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'hé', 'hk', 'pre-commit'))).toBe(false);
  });

  it('M3. the workspace repository\'s config (a 0xff comment) has alias.st = !tools/sté.sh (missing): the program does not land, the host\'s `git st` runs none', async () => {
    const s = makeScene();
    plain.push(s.root);
    const mark = join(s.root, 'pwned-M3');
    writeFileSync(join(s.ws, '.git', 'config'), Buffer.concat([readFileSync(join(s.ws, '.git', 'config')), XFF_COMMENT, Buffer.from('[alias]\n\tst = !tools/sté.sh\n')]));
    await runDaemonLike('M3', s, `mkdir -p tools && ${program(mark)} > tools/sté.sh && chmod +x tools/sté.sh`);
    hostGit(s, s.ws, 'st');
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(join(s.ws, 'tools', 'sté.sh'))).toBe(false);
  });

  it('M4. a nested .envrc (a 0xff comment) says `PATH_add bé` (missing): the command\'s sub/bé/git does not land', async () => {
    const s = makeScene();
    plain.push(s.root);
    mkdirSync(join(s.ws, 'sub'));
    writeFileSync(join(s.ws, 'sub', '.envrc'), Buffer.concat([XFF_COMMENT, Buffer.from('PATH_add bé\n')]));
    await runDaemonLike('M4', s, `mkdir -p sub/bé && ${program('/tmp/pwned')} > sub/bé/git && chmod +x sub/bé/git`);
    expect(existsSync(join(s.ws, 'sub', 'bé', 'git'))).toBe(false);
  });
});

describe('h119: programs an .envrc or a git alias runs through an interpreter (end to end)', { timeout: 120_000 }, () => {
  /*
   * FINDING P1 end to end (core envrc-references.ts, see core h119-parse.test.ts P1): the workspace
   * .envrc runs `eval "$(python3 tools/env.py)"`; the command's edit of tools/env.py lands, and
   * direnv runs it at the person's next `cd` (direnv is not installed here: the file landing is what is shown).
   */
  it('E1. .envrc `eval "$(python3 tools/env.py)"`, tools/env.py on the host: the command\'s edit of it does not land', async () => {
    const s = makeScene();
    plain.push(s.root);
    mkdirSync(join(s.ws, 'tools'));
    writeFileSync(join(s.ws, 'tools', 'env.py'), 'print("export A=1")\n');
    writeFileSync(join(s.ws, '.envrc'), 'eval "$(python3 tools/env.py)"\n');
    await runDaemonLike('E1', s, "echo 'import os; os.system(\"touch /tmp/pwned\")' >> tools/env.py");
    expect(readFileSync(join(s.ws, 'tools', 'env.py'), 'utf8')).toBe('print("export A=1")\n');
  });

  /*
   * FINDING P6 end to end (false denial; core h119-parse.test.ts P6): the workspace .envrc loads its
   * .env with `export $(grep -v '^#' .env | xargs)`: unresolved, so the whole workspace is a landing,
   * and an ordinary write (src/ok.txt) is refused.
   */
  it.fails('E2. .envrc `export $(grep -v \'^#\' .env | xargs)`: an ordinary write src/ok.txt lands', async () => {
    const s = makeScene();
    plain.push(s.root);
    writeFileSync(join(s.ws, '.envrc'), "export $(grep -v '^#' .env | xargs)\n");
    await runDaemonLike('E2', s, 'echo ok > src/ok.txt');
    expect(existsSync(join(s.ws, 'src', 'ok.txt'))).toBe(true);
  });

  /*
   * FINDING G1 end to end (core git-config.ts programWords, see core h119-parse.test.ts G1): the
   * workspace repository's alias.st is `!python3 st.py` (st.py missing); the command's st.py
   * lands, and the person's `git st` runs it (git runs an alias from the worktree's top).
   */
  it('G1. alias.st = !python3 st.py: the command\'s st.py does not land, and the host\'s `git st` runs none', async () => {
    const s = makeScene();
    plain.push(s.root);
    const mark = join(s.root, 'pwned-G1');
    execFileSync('git', ['config', 'alias.st', '!python3 st.py'], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('G1', s, `echo 'open("${mark}", "w")' > st.py`);
    hostGit(s, s.ws, 'st');
    console.log(`h119 G1: landed=${existsSync(join(s.ws, 'st.py'))} host git st ran it=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
  });

  /*
   * FINDING G4 end to end (core h119-parse.test.ts G4): alias.st = `!cd tools && ./run.sh`
   * (tools/run.sh missing): the command's tools/run.sh lands, and the person's `git st` runs it.
   */
  it('G4. alias.st = !cd tools && ./run.sh: the command\'s tools/run.sh does not land, and the host\'s `git st` runs none', async () => {
    const s = makeScene();
    plain.push(s.root);
    const mark = join(s.root, 'pwned-G4');
    execFileSync('git', ['config', 'alias.st', '!cd tools && ./run.sh'], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('G4', s, `mkdir -p tools && ${program(mark)} > tools/run.sh && chmod +x tools/run.sh`);
    hostGit(s, s.ws, 'st');
    console.log(`h119 G4: landed=${existsSync(join(s.ws, 'tools', 'run.sh'))} host git st ran it=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
  });

  /*
   * FINDING G2 end to end: alias.st's value is `!tools/\` newline `st.sh` (sh joins the lines);
   * tools/st.sh is not protected.
   */
  it('G2. alias.st = "!tools/\\\\\\nst.sh" (a backslash-newline): the command\'s tools/st.sh does not land, the host\'s `git st` runs none', async () => {
    const s = makeScene();
    plain.push(s.root);
    const mark = join(s.root, 'pwned-G2');
    writeFileSync(join(s.ws, '.git', 'config'), `${readFileSync(join(s.ws, '.git', 'config'), 'utf8')}[alias]\n\tst = "!tools/\\\\\\nst.sh"\n`);
    await runDaemonLike('G2', s, `mkdir -p tools && ${program(mark)} > tools/st.sh && chmod +x tools/st.sh`);
    hostGit(s, s.ws, 'st');
    console.log(`h119 G2: landed=${existsSync(join(s.ws, 'tools', 'st.sh'))} host git st ran it=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
  });
});

describe('h119: a host write into a folder the command replaced, between the passes', { timeout: 180_000 }, () => {
  /*
   * FINDING W1 (minor): six host folders d0..d5, each replaced by the command's file, between 1000
   * added files each (layers on /dev/shm: copied one by one, a long first pass). Each d is renamed
   * aside to `.aalis-replaced-*` when the walk meets it and removed in the second pass without a
   * second look (upper-commit.ts runLater, kind 'aside': removeAt, where a 'remove' step goes
   * through removeHost and its treeChangedSince). A host process working in a d (its cwd: a
   * shell, a watcher) that writes there once it is aside writes into `.aalis-replaced-*`, and the
   * write is removed unsaid. During the run (A2) the same write is a conflict and d is kept whole.
   * Before h117 the removal followed the check at once; now the window is the rest of the first pass.
   */
  it('W1. host processes in d0..d5 write late.txt once one d is aside: every late.txt written is kept, or its d is said changed', async () => {
    const s = await scene();
    for (let k = 0; k < 6; k++) manyFiles(join(s.ws, `d${k}`), 3, 3);
    const shm = mkdtempSync('/dev/shm/aalis-h119-');
    dirs.push(shm);
    const sb = s.sandbox({ tmpDir: shm });
    // host processes whose cwd is a d: once told (a file in HOME), each writes late.txt where it is
    const go = join(s.home, 'go-W1');
    const wrote: string[] = ['', '', '', '', '', ''];
    const writers = [0, 1, 2, 3, 4, 5].map((k) => {
      const w = spawn('sh', ['-c', `until [ -e '${go}' ]; do sleep 0.005; done; echo late > late${k}.txt && echo written`], { cwd: join(s.ws, `d${k}`), stdio: ['ignore', 'pipe', 'ignore'] });
      w.stdout!.on('data', (b: Buffer) => (wrote[k] += b.toString()));
      return w;
    });
    let r: Awaited<ReturnType<ReturnType<OverlayScene['sandbox']>['run']>>;
    let seen = false;
    try {
      const run = sb.run(req(s, ['sh', '-c', 'for a in 0 1 2 3 4 5; do mkdir add$a; i=0; while [ $i -lt 1000 ]; do echo $i > add$a/f$i; i=$((i+1)); done; rm -rf d$a && echo file > d$a; done'], { policy: workspacePolicy(s), timeoutMs: 120_000 }));
      const aside = () => readdirSync(s.ws).some((n) => n.startsWith('.aalis-replaced-'));
      let done = false;
      void run.then(() => (done = true));
      while (!aside() && !done) await new Promise((res) => setTimeout(res, 1));
      seen = !done;
      writeFileSync(go, '');
      r = await run;
      await Promise.all(writers.map((w) => new Promise((res) => (w.exitCode !== null ? res(null) : w.once('exit', res)))));
    } finally {
      for (const w of writers) w.kill();
      await sb.close();
    }
    const found = execFileSync('find', [s.ws, '-name', 'late*.txt'], { encoding: 'utf8' }).trim();
    const lost = [0, 1, 2, 3, 4, 5].filter((k) => wrote[k]!.includes('written') && !found.includes(`late${k}.txt`) && !r.stderr.includes(`d${k} changed on the host`));
    console.log(`h119 W1: aside seen=${seen} written=${JSON.stringify(wrote.map((w) => w.trim()))} found=${JSON.stringify(found.split('\n').map((l) => l.replace(s.ws, '')))} lost=${JSON.stringify(lost)} stderr=${JSON.stringify(r.stderr.slice(0, 600))}`);
    expect(seen).toBe(true);
    expect(lost).toEqual([]);
  });
});

describe('h119: a repository under a name not UTF-8 whose .git file names a git dir not UTF-8', { timeout: 120_000 }, () => {
  /*
   * landing-extras.ts rawRepoRules reads a `.git` file under a raw path with
   * `read.bytes.toString('utf8')` (not decodeHostText): a gitdir `…/gd\xfe` becomes `gd\ufffd`,
   * naming no folder the walks name. Probe: the command's hook in that git dir. Holds all the same
   * (the hook refused: the git dir is protected by other rules).
   */
  it('R1. x\\xff/r/.git is a file naming ws/gd\\xfe (git init --separate-git-dir): the command\'s gd\\xfe/hooks/pre-commit does not land, the host\'s next commit runs none', async () => {
    const s = makeScene();
    plain.push(s.root);
    const mark = join(s.root, 'pwned-R1');
    execFileSync('sh', ['-c', `mkdir "$(printf 'x\\377')" && git init -q --separate-git-dir "$PWD/$(printf 'gd\\376')" "$(printf 'x\\377')/r"`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('R1', s, `d="$(printf 'gd\\376')/hooks"; ${program(mark)} > "$d/pre-commit" && chmod +x "$d/pre-commit"`);
    execFileSync('sh', ['-c', `cd "$(printf 'x\\377')/r" && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x || true`], { cwd: s.ws, env: gitEnv(s.home), stdio: 'pipe' });
    const hook = Buffer.concat([Buffer.from(`${s.ws}/gd`), Buffer.of(0xfe), Buffer.from('/hooks/pre-commit')]);
    console.log(`h119 R1: landed=${existsSync(hook)} host commit ran it=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(hook)).toBe(false);
  });
});
