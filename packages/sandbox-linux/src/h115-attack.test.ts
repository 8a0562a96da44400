import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { execa } from 'execa';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { afterAll, describe, expect, it } from 'vitest';
import { mainDirLandings, reachPolicyOf } from './reach-policy.testing.js';
import { gate, makeScene, overlayScene, req, type Scene, until, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * h115: attacks on the overlay's commit not tested before: a daemon killed mid-commit of a
 * command's `mv` of a folder, names, hard links, an unprivileged daemon, host races.
 */

const scenes: Scene[] = [];
const dirs: string[] = [];
afterAll(() => {
  execFileSync('rm', ['-rf', ...scenes.map((s) => s.root), ...dirs]);
});

function scene(): Scene {
  const s = makeScene();
  scenes.push(s);
  return s;
}

const killChild = join(import.meta.dirname, 'h115-kill.child.testing.ts');

const count = (dir: string) => (existsSync(dir) ? readdirSync(dir).length : 0);

describe('h115: a daemon killed mid-commit of a moved folder', { timeout: 300_000 }, () => {
  /*
   * FINDING K1 (h115): data lost. `mv src src2` of a host folder crosses the overlay as a copy
   * (src2, new in the upper layer) then a removal (src, a whiteout). The commit walks the upper
   * layer in readdir order (ext4's hash order here lists `src` before `src2`) and removes the host's
   * src (removeHost → removeAt, file by file) before it renames src2 in. A daemon killed in between
   * leaves src partly removed and no src2; the next start discards the run's layers (sweepStaleRunDirs,
   * "the rest was discarded"), so the removed files exist nowhere. Seen: 34 to 1140 of 3000 files
   * lost, in every one of 6 runs. At fault: upper-commit.ts commitUpper/walkAll+entry (a whiteout's
   * removal committed before the new entries of the same folder), with service.ts's sweep.
   * Fixed (h117): removals go in a second pass once every addition has landed (upper-commit.ts
   * runLater); a kill leaves a duplicate at worst. Failed before the fix (2885 of 3000), passes after.
   */
  it('K1. `mv src src2` (a copy then a removal across the overlay), the daemon killed mid-commit: every file is under src or src2 after the next start', async () => {
    const N = 3000;
    const s = scene();
    mkdirSync(join(s.ws, 'src', 'many'));
    for (let i = 0; i < N; i++) writeFileSync(join(s.ws, 'src', 'many', `${i}.txt`), `file ${i}\n`);
    const tmpDir = mkdtempSync(join(s.root, 'layers-'));
    const child = execa(process.execPath, ['--import', 'tsx', killChild, JSON.stringify(s), tmpDir, 'mv src src2'], { cwd: join(import.meta.dirname, '..'), reject: false });
    let ended = false;
    void child.then(() => (ended = true));
    const end = Date.now() + 120_000;
    // the commit's first trace on the host: src losing files (its removal), or src2 appearing
    while (count(join(s.ws, 'src', 'many')) === N && !existsSync(join(s.ws, 'src2')) && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    const { stdout } = await child;
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' }); // the next daemon start sweeps
    const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    await next.close();
    const names = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
    const kept = new Set([...names(join(s.ws, 'src', 'many')), ...names(join(s.ws, 'src2', 'many'))]);
    console.log(`h115 K1: finished=${stdout.includes('committed')} src/many=${count(join(s.ws, 'src', 'many'))} src2/many=${count(join(s.ws, 'src2', 'many'))} next stderr=${JSON.stringify(r.stderr.slice(0, 400))}`);
    expect(kept.size).toBe(N);
  });

  /*
   * K1b (h117): the same with the layers on another file system (/dev/shm): src2 is copied entry by
   * entry, and the kill lands mid-copy (50 files of src2 on the host): src is whole still.
   */
  it('K1b. `mv src src2`, layers on another file system, the daemon killed mid-copy of src2: every file is under src or src2 after the next start', async () => {
    const N = 3000;
    const s = scene();
    mkdirSync(join(s.ws, 'src', 'many'));
    for (let i = 0; i < N; i++) writeFileSync(join(s.ws, 'src', 'many', `${i}.txt`), `file ${i}\n`);
    const tmpDir = mkdtempSync('/dev/shm/aalis-h117-');
    dirs.push(tmpDir);
    const child = execa(process.execPath, ['--import', 'tsx', killChild, JSON.stringify(s), tmpDir, 'mv src src2'], { cwd: join(import.meta.dirname, '..'), reject: false });
    let ended = false;
    void child.then(() => (ended = true));
    const end = Date.now() + 120_000;
    while (count(join(s.ws, 'src', 'many')) === N && count(join(s.ws, 'src2', 'many')) < 50 && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    const { stdout } = await child;
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' });
    const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    await next.close();
    const names = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
    const kept = new Set([...names(join(s.ws, 'src', 'many')), ...names(join(s.ws, 'src2', 'many'))]);
    console.log(`h117 K1b: finished=${stdout.includes('committed')} src/many=${count(join(s.ws, 'src', 'many'))} src2/many=${count(join(s.ws, 'src2', 'many'))} next stderr=${JSON.stringify(r.stderr.slice(0, 400))}`);
    expect(kept.size).toBe(N);
  });

  /*
   * K1c (h117): the kill timed by src losing files (the removals, the second pass now): src2 is
   * whole on the host by then.
   */
  it('K1c. `mv src src2`, the daemon killed while the host\'s src is being removed: src2 is whole after the next start', async () => {
    const N = 3000;
    const s = scene();
    mkdirSync(join(s.ws, 'src', 'many'));
    for (let i = 0; i < N; i++) writeFileSync(join(s.ws, 'src', 'many', `${i}.txt`), `file ${i}\n`);
    const tmpDir = mkdtempSync(join(s.root, 'layers-'));
    const child = execa(process.execPath, ['--import', 'tsx', killChild, JSON.stringify(s), tmpDir, 'mv src src2'], { cwd: join(import.meta.dirname, '..'), reject: false });
    let ended = false;
    void child.then(() => (ended = true));
    const end = Date.now() + 120_000;
    while (count(join(s.ws, 'src', 'many')) === N && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    const { stdout } = await child;
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' });
    const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    await next.close();
    console.log(`h117 K1c: finished=${stdout.includes('committed')} src/many=${count(join(s.ws, 'src', 'many'))} src2/many=${count(join(s.ws, 'src2', 'many'))} next stderr=${JSON.stringify(r.stderr.slice(0, 400))}`);
    expect(count(join(s.ws, 'src2', 'many'))).toBe(N);
  });

  /*
   * K3 (h115, holds): `git stash` of edits, the daemon killed mid-commit. The edits are either still
   * in the files or in a stash on the host: in 6 runs (kills 0-60 ms after the first trace) the
   * stash (.git/refs/stash, its objects) was on the host before any file was reverted (the .git
   * folder is committed before the rest of the workspace). Kept as a guard of that order.
   */
  it('K3. `git stash` of edits, the daemon killed mid-commit: every edit is still in its file or in a stash after the next start', async () => {
    const N = 500;
    const s = scene();
    mkdirSync(join(s.ws, 'src', 'many'));
    for (let i = 0; i < N; i++) writeFileSync(join(s.ws, 'src', 'many', `${i}.txt`), `v1 ${i}\n`);
    execFileSync('sh', ['-c', 'git add -A src && git -c user.name=a -c user.email=a@b commit -qm base'], { cwd: s.ws, env: gitEnv(s.home) });
    for (let i = 0; i < N; i++) writeFileSync(join(s.ws, 'src', 'many', `${i}.txt`), `edit ${i}\n`);
    const tmpDir = mkdtempSync(join(s.root, 'layers-'));
    const child = execa(process.execPath, ['--import', 'tsx', killChild, JSON.stringify(s), tmpDir, 'git -c user.name=a -c user.email=a@b stash -q'], { cwd: join(import.meta.dirname, '..'), reject: false });
    let ended = false;
    void child.then(() => (ended = true));
    const end = Date.now() + 120_000;
    const stashed = () => existsSync(join(s.ws, '.git', 'refs', 'stash'));
    const reverted = () => readFileSync(join(s.ws, 'src', 'many', '0.txt'), 'utf8').startsWith('v1') || readFileSync(join(s.ws, 'src', 'many', `${N - 1}.txt`), 'utf8').startsWith('v1');
    while (!reverted() && !stashed() && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    const firstSeen = `reverted=${reverted()} stashed=${stashed()}`;
    child.kill('SIGKILL');
    const { stdout } = await child;
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' });
    await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    await next.close();
    let edits = 0;
    for (let i = 0; i < N; i++) if (readFileSync(join(s.ws, 'src', 'many', `${i}.txt`), 'utf8').startsWith('edit')) edits++;
    let inStash = false;
    try {
      inStash = execFileSync('git', ['stash', 'show', '-p'], { cwd: s.ws, encoding: 'utf8', env: gitEnv(s.home), stdio: 'pipe' }).includes('+edit 0');
    } catch {
      // no stash
    }
    console.log(`h115 K3: first seen ${firstSeen}; finished=${stdout.includes('committed')} files still edited=${edits}/${N} stash on the host=${stashed()} readable=${inStash}`);
    expect(edits === N || inStash).toBe(true);
  });
});

const nobodyChild = join(import.meta.dirname, 'h115-nobody.child.testing.ts');
const gitEnv = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' });

describe.skipIf(!canRunAsNobody(nobodyChild))('h115: the landings as an unprivileged daemon (nobody)', { timeout: 120_000 }, () => {
  it('N1. hooks, config, .envrc and what it loads, a nested repository\'s hooksPath, .env, a socket in HOME: as they hold for root', async () => {
    const s = scene();
    execFileSync('git', ['init', '-q', 'sub'], { cwd: s.ws, env: gitEnv(s.home) });
    execFileSync('git', ['config', 'core.hooksPath', 'hk'], { cwd: join(s.ws, 'sub'), env: gitEnv(s.home) });
    writeFileSync(join(s.ws, '.envrc'), 'source_env lib/env.sh\n');
    const sock = join(s.home, 'agent.sock');
    const listener = spawn('python3', ['-c', 'import socket,sys,time\ns=socket.socket(socket.AF_UNIX);s.bind(sys.argv[1]);s.listen(1);print("ready",flush=True);time.sleep(60)', sock], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => listener.stdout!.once('data', r));
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
    const scripts = {
      ordinary: 'echo ok > src/ok.txt',
      hook: "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
      config: "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
      envrc: "echo 'export PWNED=1' >> .envrc",
      envrcLoads: "mkdir -p lib && echo 'export PWNED=1' > lib/env.sh",
      nestedHooks: "mkdir -p sub/hk && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > sub/hk/pre-commit && chmod +x sub/hk/pre-commit",
      newEnvrc: "mkdir -p deep && echo 'export PWNED=1' > deep/.envrc",
      readEnv: 'cat .env',
      gitWork: 'G="git -c user.name=a -c user.email=a@b -c commit.gpgsign=false"; $G add src && $G commit -qm one && $G checkout -qb feature && echo two > src/two.txt && $G add src/two.txt && $G commit -qm two && $G stash list && git init -q newproj && $G -C newproj commit -q --allow-empty -m first',
      lock: 'mkdir -p locked/inner && echo x > locked/inner/f && git init -q locked/r && chmod 000 locked/r locked',
      afterLock: 'echo ok2 > src/ok2.txt',
      socket: `[ -e '${sock}' ] && echo present; socat -u UNIX-CONNECT:'${sock}' - </dev/null && echo connected`,
    };
    let r: Awaited<ReturnType<typeof execa>>;
    try {
      const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', nobodyChild, JSON.stringify(s), JSON.stringify(scripts));
      r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 100_000 });
    } finally {
      listener.kill();
    }
    console.log(`h115 N1: ${String(r.stdout)} ${String(r.stderr)}`);
    const out = JSON.parse(String(r.stdout)) as Record<string, { exit: number; denied: boolean; out: string }>;
    expect(out.ordinary!.exit).toBe(0);
    expect(existsSync(join(s.ws, 'src', 'ok.txt'))).toBe(true);
    expect(existsSync(join(s.ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(s.ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
    expect(readFileSync(join(s.ws, '.envrc'), 'utf8')).not.toContain('PWNED');
    expect(existsSync(join(s.ws, 'lib', 'env.sh'))).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'hk', 'pre-commit'))).toBe(false);
    expect(existsSync(join(s.ws, 'deep', '.envrc'))).toBe(false);
    expect(out.readEnv!.out).not.toContain('SECRET=1');
    expect(out.socket!.out).not.toContain('connected');
    // a folder the command locked (chmod 000, a repository in it): the next run still commits
    console.log(`h115 N1 locked: ${JSON.stringify(out.lock)} ${JSON.stringify(out.afterLock)} mode=${(lstatSync(join(s.ws, 'locked'), { throwIfNoEntry: false })?.mode ?? 0).toString(8)}`);
    expect(existsSync(join(s.ws, 'src', 'ok2.txt'))).toBe(true);
    // ordinary git work, as an unprivileged daemon: committed
    expect(out.gitWork!.exit, out.gitWork!.out).toBe(0);
    expect(execFileSync('git', ['-c', 'safe.directory=*', 'log', '--oneline'], { cwd: s.ws, encoding: 'utf8', env: gitEnv(s.home) }).trim().split('\n')).toHaveLength(2);
    expect(execFileSync('git', ['-c', 'safe.directory=*', 'branch', '--show-current'], { cwd: s.ws, encoding: 'utf8', env: gitEnv(s.home) }).trim()).toBe('feature');
    expect(execFileSync('git', ['-c', 'safe.directory=*', 'log', '--oneline'], { cwd: join(s.ws, 'newproj'), encoding: 'utf8', env: gitEnv(s.home) }).trim().split('\n')).toHaveLength(1);
  });
});

/** A run under the daemon-like policy (the h113 attacks' `daemonPolicy`), built after the host's setup. */
async function runDaemonLike(id: string, s: Scene, script: string) {
  const policy = reachPolicyOf(s, { extraLandings: mainDirLandings(s.ws, s.home) });
  const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
  try {
    const r = await sb.run(req(s, ['sh', '-c', script], { policy, timeoutMs: 60_000 }));
    console.log(`h115 ${id}: exit=${r.exitCode} writeDenied=${String(r.writeDenied)} denied=${JSON.stringify(r.deniedWrites?.map((d) => (typeof d === 'string' ? d : JSON.stringify(d)).replace(s.ws, '')))} aside=${JSON.stringify((r as { movedAside?: unknown }).movedAside)} stdout=${JSON.stringify(r.stdout.slice(0, 300))} stderr=${JSON.stringify(r.stderr.replace(/(?:d123456789abcdef\/){3,}/g, '<deep>/').slice(0, 1500))}`);
    return r;
  } finally {
    await sb.close();
  }
}

/** What `find` (which walks any depth) prints for `args` in the workspace. */
const findIn = (s: Scene, ...args: string[]) => execFileSync('find', ['.', ...args], { cwd: s.ws, encoding: 'latin1' }).trim();

const HOOK = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n'";

describe('h115: hard links, long paths and names', { timeout: 120_000 }, () => {
  it('R1. a hard link made inside to .git/config, then written through: .git/config unchanged', async () => {
    const s = scene();
    const before = readFileSync(join(s.ws, '.git', 'config'), 'utf8');
    await runDaemonLike('R1', s, "ln .git/config cfg; printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> cfg; ls -li .git/config cfg; true");
    expect(readFileSync(join(s.ws, '.git', 'config'), 'utf8')).toBe(before);
  });

  it('R2. a hard link made inside to ~/.bashrc (outside the writable roots), then written through: ~/.bashrc unchanged', async () => {
    const s = scene();
    await runDaemonLike('R2', s, `ln '${join(s.home, '.bashrc')}' rc; echo 'touch /tmp/pwned' >> rc; true`);
    expect(readFileSync(join(s.home, '.bashrc'), 'utf8')).toBe('# rc\n');
  });

  it('R3. a hard link made inside from .git/hooks/pre-commit to a file of the workspace: no hook lands', async () => {
    const s = scene();
    await runDaemonLike('R3', s, `${HOOK} > evil.sh; chmod +x evil.sh; ln evil.sh .git/hooks/pre-commit; ln .git/hooks/pre-commit.sample x; echo 'touch /tmp/pwned' >> x; true`);
    expect(existsSync(join(s.ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(s.ws, '.git', 'hooks', 'pre-commit.sample'), 'utf8')).not.toContain('pwned');
  });

  it('R4. a path longer than PATH_MAX made inside: the ordinary file lands, the .envrc and a new repository\'s hook do not', async () => {
    const s = scene();
    const seg = 'd123456789abcdef';
    const deep = `for(1..300){mkdir "${seg}"; chdir "${seg}" or die "chdir: $!"} open(my $f, ">", "f") or die; print $f "ok\\n"; close $f; open($f, ">", ".envrc") or die; print $f "export P=1\\n"; close $f; for my $d ("r", "r/.git", "r/.git/hooks", "r/.git/objects", "r/.git/refs") { mkdir $d or die } open($f, ">", "r/.git/HEAD") or die; print $f "ref: refs/heads/main\\n"; close $f; open($f, ">", "r/.git/hooks/pre-commit") or die; print $f "#!/bin/sh\\ntouch /tmp/pwned\\n"; close $f; chmod 0755, "r/.git/hooks/pre-commit"; mkdir ".vscode"; open($f, ">", ".vscode/tasks.json") or die; print $f "{}\\n"; close $f;`;
    const r = await runDaemonLike('R4', s, `perl -e '${deep}'`);
    expect(r.exitCode).toBe(0);
    console.log(`h115 R4 host: ${findIn(s, '-name', 'f', '-o', '-name', '.envrc', '-o', '-name', 'pre-commit').split('\n').map((l) => `${l.length}:${l.slice(-40)}`).join(' ')}`);
    expect(findIn(s, '-name', 'f')).not.toBe('');
    expect(findIn(s, '-name', '.envrc')).toBe('');
    expect(findIn(s, '-name', 'pre-commit')).toBe('');
    expect(findIn(s, '-name', 'tasks.json')).toBe('');
  });

  it('R5. a folder named with a non-UTF-8 byte: its new .envrc and a new repository\'s hook there do not land, its ordinary file does', async () => {
    const s = scene();
    await runDaemonLike('R5', s, `d=$(printf 'x\\377y'); mkdir "$d" && echo 'export P=1' > "$d/.envrc" && git init -q "$d/r" && ${HOOK} > "$d/r/.git/hooks/pre-commit" && chmod +x "$d/r/.git/hooks/pre-commit" && echo ok > "$d/ok.txt"`);
    const d = Buffer.concat([Buffer.from(s.ws + '/x'), Buffer.of(0xff), Buffer.from('y')]);
    expect(existsSync(Buffer.concat([d, Buffer.from('/ok.txt')]))).toBe(true);
    expect(existsSync(Buffer.concat([d, Buffer.from('/.envrc')]))).toBe(false);
    expect(existsSync(Buffer.concat([d, Buffer.from('/r/.git/hooks/pre-commit')]))).toBe(false);
  });

  it('R6. a host repository in a folder whose name holds a newline, core.hooksPath=hk: the command\'s hk/pre-commit does not land', async () => {
    const s = scene();
    const dir = join(s.ws, 'a\nb');
    mkdirSync(dir);
    execFileSync('git', ['init', '-q', dir], { env: gitEnv(s.home) });
    execFileSync('git', ['config', 'core.hooksPath', 'hk'], { cwd: dir, env: gitEnv(s.home) });
    await runDaemonLike('R6', s, `d=$(printf 'a\\nb'); mkdir -p "$d/hk" && ${HOOK} > "$d/hk/pre-commit" && chmod +x "$d/hk/pre-commit"`);
    expect(existsSync(join(dir, 'hk', 'pre-commit'))).toBe(false);
  });

  it('R7. a host .envrc in a folder whose name holds a newline, `source_env lib.sh`: the command\'s lib.sh does not land', async () => {
    const s = scene();
    const dir = join(s.ws, 'a\nb');
    mkdirSync(dir);
    writeFileSync(join(dir, '.envrc'), 'source_env lib.sh\n');
    await runDaemonLike('R7', s, `d=$(printf 'a\\nb'); echo 'export P=1' > "$d/lib.sh"`);
    expect(existsSync(join(dir, 'lib.sh'))).toBe(false);
  });

  it('R8. a host repository under a non-UTF-8 folder whose name also holds a newline, core.hooksPath=hk: no hook lands', async () => {
    const s = scene();
    const dir = Buffer.concat([Buffer.from(s.ws + '/a\n'), Buffer.of(0xfe), Buffer.from('b')]);
    execFileSync('sh', ['-c', `d=$(printf 'a\\n\\376b'); git init -q "$d" && git -C "$d" config core.hooksPath hk`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('R8', s, `d=$(printf 'a\\n\\376b'); mkdir -p "$d/hk" && ${HOOK} > "$d/hk/pre-commit" && chmod +x "$d/hk/pre-commit"`);
    expect(existsSync(Buffer.concat([dir, Buffer.from('/hk/pre-commit')]))).toBe(false);
  });
  /** A host folder 300 levels of 16 characters deep under the workspace (past PATH_MAX), made by `perl` (`SEG` is the level's name), then `rest`. */
  const deepPerl = (seg: string, rest: string, make: boolean) => String.raw`for(1..300){MK chdir "SEG" or die "chdir: $!"} REST`.replace('MK', make ? 'mkdir "SEG";' : '').replaceAll('SEG', seg).replace('REST', rest);
  const SEG = 'd123456789abcdef';
  const deepRepo = String.raw`for my $d ("r", "r/.git", "r/.git/hooks", "r/.git/objects", "r/.git/refs", "r/.git/refs/heads") { mkdir $d or die } open(my $f, ">", "r/.git/HEAD") or die; print $f "ref: refs/heads/main
"; close $f; open($f, ">", "r/.git/config") or die; print $f "[core]
	repositoryformatversion = 0
HOOKS"; close $f;`;

  it('R9. a host repository deeper than PATH_MAX whose core.hooksPath is hk: the command\'s hook there does not land', async () => {
    const s = scene();
    execFileSync('perl', ['-e', deepPerl(SEG, deepRepo.replace('HOOKS', '\thooksPath = hk\n'), true)], { cwd: s.ws });
    const w = String.raw`mkdir "r/hk" or die; open(my $f, ">", "r/hk/pre-commit") or die; print $f "#!/bin/sh
touch /tmp/pwned
"; close $f; chmod 0755, "r/hk/pre-commit";`;
    await runDaemonLike('R9', s, `perl -e '${deepPerl(SEG, w, false)}'; echo ok > src/ok.txt`);
    expect(findIn(s, '-path', '*/r/hk/*')).toBe('');
  });

  /*
   * FINDING R9b (h115, a false denial of every write): with a repository deeper than PATH_MAX in
   * the workspace, nothing a command writes is committed, in any writable root: "nothing the command
   * wrote under …/ws was committed: ENAMETOOLONG: name too long, lstat '…/r/.git'" (the same for the
   * session temp and the sandbox's cache), while the command exits 0. At fault: core
   * landing-extras.ts nestedRepoRules, whose `lstatSync(dotGit, { throwIfNoEntry: false })` is
   * outside its try (an ENAMETOOLONG escapes landingExtraRules, withLandingLinks, and each root of
   * commit-batch.ts commitBatch fails); the readers there take paths as text. Inside the sandbox the
   * tree also shows only 231 levels deep (the rest an empty read-only folder). R11: a command can
   * make such a repository itself (inert, so committed), and every later run commits nothing.
   */
  it('R9b. the same: an ordinary write elsewhere in that run lands (src/ok.txt)', async () => {
    const s = scene();
    execFileSync('perl', ['-e', deepPerl(SEG, deepRepo.replace('HOOKS', '\thooksPath = hk\n'), true)], { cwd: s.ws });
    await runDaemonLike('R9b', s, 'echo ok > src/ok.txt');
    expect(existsSync(join(s.ws, 'src', 'ok.txt'))).toBe(true);
  });

  it('R11. a command makes an inert repository deeper than PATH_MAX (committed): the next run\'s ordinary write still lands', async () => {
    const s = scene();
    const first = await runDaemonLike('R11 make', s, `perl -e '${deepPerl(SEG, deepRepo.replace('HOOKS', ''), true)}'`);
    expect(first.exitCode).toBe(0);
    const made = findIn(s, '-path', '*/r/.git/HEAD') !== '';
    console.log(`h115 R11: the deep repository landed: ${made}`);
    await runDaemonLike('R11 next', s, 'echo ok > src/ok.txt');
    expect(made).toBe(true);
    expect(existsSync(join(s.ws, 'src', 'ok.txt'))).toBe(true);
  });

  it('R10. a host file deeper than PATH_MAX (no repository there): the command can append to it, and the edit lands', async () => {
    const s = scene();
    execFileSync('perl', ['-e', deepPerl(SEG, String.raw`open(my $f, ">", "deep.txt") or die; print $f "one
"; close $f;`, true)], { cwd: s.ws });
    const r = await runDaemonLike('R10', s, `perl -e '${deepPerl(SEG, String.raw`open(my $f, ">>", "deep.txt") or die "open: $!"; print $f "two
"; close $f or die;`, false)}'`);
    const content = execFileSync('sh', ['-c', 'find . -name deep.txt -execdir cat {} +'], { cwd: s.ws, encoding: 'utf8' });
    expect(r.exitCode).toBe(0);
    expect(content).toBe('one\ntwo\n');
  });
  it('R12. a host hard link between .git/hooks/pre-commit and scripts/pre-commit.sh: the command\'s edit of the script does not reach the hook', async () => {
    const s = scene();
    mkdirSync(join(s.ws, 'scripts'));
    writeFileSync(join(s.ws, 'scripts', 'pre-commit.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    execFileSync('ln', [join(s.ws, 'scripts', 'pre-commit.sh'), join(s.ws, '.git', 'hooks', 'pre-commit')]);
    await runDaemonLike('R12', s, "echo 'touch /tmp/pwned' >> scripts/pre-commit.sh; printf 'x' >> .git/hooks/pre-commit; true");
    expect(readFileSync(join(s.ws, '.git', 'hooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });
});

describe('h115: the host swaps folders for symlinks while the commit runs', { timeout: 120_000 }, () => {
  it('S1. out/ swapped with a link to a folder outside the workspace, out/deep with a link to .git/hooks, in a loop: nothing lands through either link, no stack trace', async () => {
    const s = await overlayScene();
    scenes.push(s);
    const elsewhere = join(s.root, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(join(s.ws, 'out', 'deep'), { recursive: true });
    writeFileSync(join(s.ws, 'out', 'keep.txt'), 'keep\n');
    const hooksBefore = readdirSync(join(s.ws, '.git', 'hooks')).sort();
    const open = gate(s);
    const sb = s.sandbox();
    const run = sb.run(req(s, ['sh', '-c', `i=0; while [ $i -lt 1500 ]; do echo $i > out/f$i; echo $i > out/deep/pre-commit$i; i=$((i+1)); done; printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > out/deep/pre-commit; touch started; ${open.wait}`], { policy: workspacePolicy(s), timeoutMs: 60_000 }));
    await until(() => s.inUpper('started'), 'the command wrote its files');
    const loop = spawn('sh', ['-c', 'while :; do mv out/deep out/deep.real && ln -s ../.git/hooks out/deep; mv out out.real && ln -s ../elsewhere out; rm out; mv out.real out; rm out/deep; mv out/deep.real out/deep; done'], { cwd: s.ws, stdio: 'ignore' });
    let r: Awaited<typeof run>;
    try {
      open.open();
      r = await run;
    } finally {
      loop.kill('SIGKILL');
      await new Promise((res) => loop.once('exit', res));
      await sb.close();
    }
    // the loop's state as it was killed, undone
    if (lstatSync(join(s.ws, 'out'), { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(join(s.ws, 'out'));
    if (existsSync(join(s.ws, 'out.real'))) renameSync(join(s.ws, 'out.real'), join(s.ws, 'out'));
    if (lstatSync(join(s.ws, 'out', 'deep'), { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(join(s.ws, 'out', 'deep'));
    if (existsSync(join(s.ws, 'out', 'deep.real'))) renameSync(join(s.ws, 'out', 'deep.real'), join(s.ws, 'out', 'deep'));
    const committedOut = readdirSync(join(s.ws, 'out')).length;
    console.log(`h115 S1: exit=${r.exitCode} out=${committedOut} deep=${readdirSync(join(s.ws, 'out', 'deep')).length} elsewhere=${readdirSync(elsewhere).length} hooks=${readdirSync(join(s.ws, '.git', 'hooks')).length} stderr=${JSON.stringify(r.stderr.slice(0, 1500))}`);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(join(s.ws, '.git', 'hooks')).sort()).toEqual(hooksBefore);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(join(s.ws, 'out', 'keep.txt'), 'utf8')).toBe('keep\n');
  });
});

describe('h115: what outlives the command', { timeout: 120_000 }, () => {
  it('B1. a background process the command left (setsid, double fork) is gone before the commit: nothing it writes later reaches the host', async () => {
    const s = scene();
    const token = `h115-bg-${process.pid}-${Date.now()}`;
    const r = await runDaemonLike('B1', s, `(setsid sh -c 'exec -a ${token} sh -c "while :; do date +%s%N >> bg.txt; ln -sf ../.git/hooks out 2>/dev/null; sleep 0.01; done"' </dev/null >/dev/null 2>&1 &) ; sleep 0.3; echo done`);
    expect(r.exitCode).toBe(0);
    const first = existsSync(join(s.ws, 'bg.txt')) ? readFileSync(join(s.ws, 'bg.txt'), 'utf8') : '';
    await new Promise((res) => setTimeout(res, 500));
    const later = existsSync(join(s.ws, 'bg.txt')) ? readFileSync(join(s.ws, 'bg.txt'), 'utf8') : '';
    let alive = '';
    try {
      alive = execFileSync('pgrep', ['-af', token], { encoding: 'utf8' });
    } catch {
      // none
    }
    expect(alive).toBe('');
    expect(later).toBe(first);
  });
  it('B2. a listening socket in HOME (outside the policy\'s unixSockets), root daemon: the command cannot connect to it', async () => {
    const s = scene();
    const sock = join(s.home, 'agent.sock');
    const listener = spawn('python3', ['-c', 'import socket,sys,time\ns=socket.socket(socket.AF_UNIX);s.bind(sys.argv[1]);s.listen(1);print("ready",flush=True);time.sleep(60)', sock], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => listener.stdout!.once('data', r));
    let r: Awaited<ReturnType<typeof runDaemonLike>>;
    try {
      r = await runDaemonLike('B2', s, `[ -e '${sock}' ] && echo present; socat -u UNIX-CONNECT:'${sock}' - </dev/null && echo connected; true`);
    } finally {
      listener.kill();
    }
    expect(r.stdout).not.toContain('connected');
  });
});

describe('h115: a daemon killed while it builds a new folder entry by entry (layers on another file system)', { timeout: 300_000 }, () => {
  /*
   * FINDING K2 (h115, minor): a folder the commit makes entry by entry (the layers on another file
   * system than the workspace: a copy) is made 0700 and given the command's mode only once the walk
   * is back above it (upper-commit.ts entry/walkAll, chmodFromAbove). A daemon killed meanwhile
   * leaves pub/ and pub/a at 0700 where the command made them 0755, and the next start does not put
   * it right (its journal names temps only: commit-journal.ts): the group and others lose access.
   * Fixed (h117): a mode that keeps the folder the owner's to fill and nobody else's to write in
   * (0755, 0750, 0700) is set when it is made (upper-commit.ts earlyMode); a wider or narrower one
   * (0775, 0555) is still set on the way back up, so a kill leaves it 0700. Failed before (700), passes after.
   */
  it('K2. a new folder pub/ (mode 755) with many files, the commit cut off: pub/ is absent or has the mode the command gave it', async () => {
    const s = scene();
    const tmpDir = mkdtempSync('/dev/shm/aalis-h115-');
    dirs.push(tmpDir);
    const child = execa(process.execPath, ['--import', 'tsx', killChild, JSON.stringify(s), tmpDir, 'umask 022; mkdir -p pub/a && i=0; while [ $i -lt 2000 ]; do echo $i > pub/a/f$i; i=$((i+1)); done'], { cwd: join(import.meta.dirname, '..'), reject: false });
    let ended = false;
    void child.then(() => (ended = true));
    const end = Date.now() + 120_000;
    while (count(join(s.ws, 'pub', 'a')) < 50 && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
    child.kill('SIGKILL');
    const { stdout } = await child;
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' });
    const r = await next.run(req(s, ['sh', '-c', 'ls -ld pub pub/a'], { policy: workspacePolicy(s) }));
    await next.close();
    const mode = (p: string) => (existsSync(p) ? (lstatSync(p).mode & 0o7777).toString(8) : 'absent');
    console.log(`h115 K2: finished=${stdout.includes('committed')} files=${count(join(s.ws, 'pub', 'a'))} pub=${mode(join(s.ws, 'pub'))} pub/a=${mode(join(s.ws, 'pub', 'a'))} next: ${JSON.stringify(r.stdout + r.stderr)}`);
    for (const p of [join(s.ws, 'pub'), join(s.ws, 'pub', 'a')]) expect(['absent', '755']).toContain(mode(p));
  });
});

/** `ws/<prefix><0xff><suffix>` as the bytes the host has. */
const rawIn = (dir: string, prefix: string, suffix = '') => Buffer.concat([Buffer.from(`${dir}/${prefix}`), Buffer.of(0xff), Buffer.from(suffix)]);
/** A program that touches `mark` when run. */
const program = (mark: string) => `printf '#!/bin/sh\\ntouch ${mark}\\n'`;
/** What the person's next git command does on the host (a failing one may still have run the program). */
function hostGit(s: Scene, cwd: string, ...args: string[]): void {
  try {
    execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', ...args], { cwd, stdio: 'pipe', env: gitEnv(s.home) });
  } catch {
    // the mark tells
  }
}

/*
 * FINDING U (h115): a host file that names a landing in bytes that are not UTF-8 (a git config
 * value, an .envrc line) has it read as UTF-8 text (`bytes.toString('utf8')`: the byte 0xff becomes
 * U+FFFD), so the landing protected is `hk\ufffd`, while the commit's walk names the command's
 * entry `hk\udcff` (core's decodeName): the rule never matches and the command's hook, program or
 * sourced file lands. git reads config values as bytes, so the host's next git command runs it
 * (seen: U3, U4, U5, U6, U7 touch their mark: a hook, core.fsmonitor, an included config, an alias). At fault: core git-config.ts gitConfigEntries/gitConfigValues
 * (read.bytes.toString('utf8')) feeding landing-extras.ts nestedRepoRules/repoRules and plugin-reach
 * hooks-path.ts (and the `included` set of config files, alias/fsmonitor programs by gitConfigProgramPaths); core landing-extras.ts envrcRules and plugin-reach envrc-landings.ts
 * (read.bytes.toString('utf8') before envrcReferences). direnv is not installed here: U1/U2 show
 * the file landing under the exact name the .envrc sources. U8: the same for a landing symlink's
 * target (core link-chain.ts resolutionOf/linkChainOf: readlinkSync and lstatSync by text, used by
 * landing-extras.ts landingLinkRules): a dangling .git/hooks/pre-commit -> ../../scripts\xff/… lets the
 * command make the file it leads to, and the host's next commit runs it.
 */
describe('h115: landings named by host files in bytes that are not UTF-8', { timeout: 120_000 }, () => {
  it('U1. the workspace .envrc says `source_env lib\\xff.sh` (missing): the command\'s lib\\xff.sh does not land', async () => {
    const s = scene();
    writeFileSync(join(s.ws, '.envrc'), Buffer.concat([Buffer.from('source_env lib'), Buffer.of(0xff), Buffer.from('.sh\n')]));
    await runDaemonLike('U1', s, `echo 'touch /tmp/pwned' > "$(printf 'lib\\377.sh')"`);
    expect(existsSync(rawIn(s.ws, 'lib', '.sh'))).toBe(false);
  });

  it('U2. a nested .envrc says `source_env lib\\xff.sh` (missing): the command\'s sub/lib\\xff.sh does not land', async () => {
    const s = scene();
    mkdirSync(join(s.ws, 'sub'));
    writeFileSync(join(s.ws, 'sub', '.envrc'), Buffer.concat([Buffer.from('source_env lib'), Buffer.of(0xff), Buffer.from('.sh\n')]));
    await runDaemonLike('U2', s, `echo 'touch /tmp/pwned' > "sub/$(printf 'lib\\377.sh')"`);
    expect(existsSync(rawIn(join(s.ws, 'sub'), 'lib', '.sh'))).toBe(false);
  });

  it('U3. a nested repository\'s core.hooksPath is hk\\xff (missing): the command\'s hook does not land, and the host\'s next commit there runs none', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U3');
    execFileSync('sh', ['-c', `git init -q sub && git -C sub config core.hooksPath "$(printf 'hk\\377')"`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('U3', s, `d="sub/$(printf 'hk\\377')"; mkdir -p "$d" && ${program(mark)} > "$d/pre-commit" && chmod +x "$d/pre-commit"`);
    hostGit(s, join(s.ws, 'sub'), 'commit', '-q', '--allow-empty', '-m', 'x');
    console.log(`h115 U3: landed=${existsSync(Buffer.concat([rawIn(join(s.ws, 'sub'), 'hk'), Buffer.from('/pre-commit')]))} host git commit ran the hook=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(Buffer.concat([rawIn(join(s.ws, 'sub'), 'hk'), Buffer.from('/pre-commit')]))).toBe(false);
  });

  it('U4. the workspace repository\'s core.hooksPath is hk\\xff (missing): the command\'s hook does not land, and the host\'s next commit runs none', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U4');
    execFileSync('sh', ['-c', `git config core.hooksPath "$(printf 'hk\\377')"`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('U4', s, `d="$(printf 'hk\\377')"; mkdir -p "$d" && ${program(mark)} > "$d/pre-commit" && chmod +x "$d/pre-commit"`);
    hostGit(s, s.ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    console.log(`h115 U4: landed=${existsSync(Buffer.concat([rawIn(s.ws, 'hk'), Buffer.from('/pre-commit')]))} host git commit ran the hook=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(Buffer.concat([rawIn(s.ws, 'hk'), Buffer.from('/pre-commit')]))).toBe(false);
  });

  it('U5. a nested repository\'s core.fsmonitor is tools/fs\\xff.sh (missing): the command\'s program does not land, and the host\'s next git status runs none', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U5');
    execFileSync('sh', ['-c', `git init -q sub && git -C sub config core.fsmonitor "$(printf 'tools/fs\\377.sh')"`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('U5', s, `f="sub/tools/$(printf 'fs\\377.sh')"; mkdir -p sub/tools && ${program(mark)} > "$f" && chmod +x "$f"`);
    hostGit(s, join(s.ws, 'sub'), 'status', '--short');
    console.log(`h115 U5: landed=${existsSync(rawIn(join(s.ws, 'sub', 'tools'), 'fs', '.sh'))} host git status ran the program=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(rawIn(join(s.ws, 'sub', 'tools'), 'fs', '.sh'))).toBe(false);
  });
  it('U6. a nested repository\'s config includes inc\\xff.cfg (missing): the command\'s file there does not land, and the host\'s next git status runs no fsmonitor', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U6');
    execFileSync('sh', ['-c', `git init -q sub && git -C sub config include.path "$(printf '../inc\\377.cfg')"`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('U6', s, `printf '[core]\\n\\tfsmonitor = touch ${mark}; false\\n' > "sub/$(printf 'inc\\377.cfg')"`);
    hostGit(s, join(s.ws, 'sub'), 'status', '--short');
    console.log(`h115 U6: landed=${existsSync(rawIn(join(s.ws, 'sub'), 'inc', '.cfg'))} host git status ran the fsmonitor=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(rawIn(join(s.ws, 'sub'), 'inc', '.cfg'))).toBe(false);
  });

  it('U7. the workspace repository\'s alias.st is !tools/st\\xff.sh (missing): the command\'s program does not land, and the host\'s `git st` runs none', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U7');
    execFileSync('sh', ['-c', `git config alias.st "$(printf '!tools/st\\377.sh')"`], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('U7', s, `f="tools/$(printf 'st\\377.sh')"; mkdir -p tools && ${program(mark)} > "$f" && chmod +x "$f"`);
    hostGit(s, s.ws, 'st');
    console.log(`h115 U7: landed=${existsSync(rawIn(join(s.ws, 'tools'), 'st', '.sh'))} host git st ran the program=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(rawIn(join(s.ws, 'tools'), 'st', '.sh'))).toBe(false);
  });
  it('U8. .git/hooks/pre-commit is a host symlink to ../../scripts\\xff/pre-commit.sh (missing): the command\'s file there does not land, and the host\'s next commit runs none', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U8');
    execFileSync('sh', ['-c', `ln -s "../../$(printf 'scripts\\377')/pre-commit.sh" .git/hooks/pre-commit`], { cwd: s.ws });
    await runDaemonLike('U8', s, `d="$(printf 'scripts\\377')"; mkdir -p "$d" && ${program(mark)} > "$d/pre-commit.sh" && chmod +x "$d/pre-commit.sh"`);
    hostGit(s, s.ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    console.log(`h115 U8: landed=${existsSync(rawIn(s.ws, 'scripts', '/pre-commit.sh'))} host git commit ran the hook=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(rawIn(s.ws, 'scripts', '/pre-commit.sh'))).toBe(false);
  });

  it('U9. the same, scripts\\xff/pre-commit.sh there on the host: the command\'s folder put in its place does not change what the hook runs', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-U9');
    execFileSync('sh', ['-c', `d="$(printf 'scripts\\377')"; mkdir "$d" && printf '#!/bin/sh\\nexit 0\\n' > "$d/pre-commit.sh" && chmod +x "$d/pre-commit.sh" && ln -s "../../$d/pre-commit.sh" .git/hooks/pre-commit`], { cwd: s.ws });
    await runDaemonLike('U9', s, `d="$(printf 'scripts\\377')"; rm -rf "$d"; mkdir -p "$d" && ${program(mark)} > "$d/pre-commit.sh" && chmod +x "$d/pre-commit.sh"`);
    hostGit(s, s.ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    console.log(`h115 U9: host git commit ran the command's hook=${existsSync(mark)} now=${JSON.stringify(readFileSync(rawIn(s.ws, 'scripts', '/pre-commit.sh'), 'utf8'))}`);
    expect(existsSync(mark)).toBe(false);
  });
});


describe('h115: ordinary git work (false denials)', { timeout: 120_000 }, () => {
  const G = 'git -c user.name=a -c user.email=a@b -c commit.gpgsign=false';

  /*
   * FINDING F1 (h115, a false denial, perhaps by design): `git worktree add wt -b feat` in the
   * workspace, then a commit in wt. Refused (kept off): wt/.git and every entry of
   * .git/worktrees/wt (HEAD, index, commondir, gitdir, logs/HEAD, COMMIT_EDITMSG, ORIG_HEAD). The
   * host is left with wt/ and its files as untracked files of the main repository, no worktree, the
   * branch's commit unreachable from wt (`git -C wt log` shows the main branch). The command
   * exited 0. At fault: the landing table's .git/worktrees and `.git` file rules (api-reach
   * GIT_LANDINGS), with no new-worktree verdict like new-repository.ts's for a new `.git`.
   */
  it('F1. `git worktree add wt` in the workspace, then a commit there: the worktree works on the host', async () => {
    const s = scene();
    const r = await runDaemonLike('F1', s, `${G} commit -q --allow-empty -m one && ${G} worktree add -q wt -b feat && echo x > wt/x.txt && ${G} -C wt add x.txt && ${G} -C wt commit -qm two`);
    expect(r.exitCode).toBe(0);
    const log = execFileSync('git', ['-C', join(s.ws, 'wt'), 'log', '--oneline'], { encoding: 'utf8', env: gitEnv(s.home) });
    expect(log.trim().split('\n')).toHaveLength(2);
  });

  it('F2. `git init` and a first commit in a folder whose name is not UTF-8: the new repository lands', async () => {
    const s = scene();
    const r = await runDaemonLike('F2', s, `d=$(printf 'p\\377'); mkdir "$d" && git init -q "$d" && echo x > "$d/x" && ${G} -C "$d" add x && ${G} -C "$d" commit -qm one`);
    expect(r.exitCode).toBe(0);
    expect(existsSync(Buffer.concat([rawIn(s.ws, 'p'), Buffer.from('/.git/HEAD')]))).toBe(true);
  });

  /*
   * FINDING F3-F5 (h115, false denials; fail-closed on purpose, and said): an .envrc at the top of
   * the workspace whose loads name a variable it sets itself, or a command substitution (everyday
   * direnv: `export VIRTUAL_ENV=$PWD/.venv; PATH_add "$VIRTUAL_ENV/bin"`, `$(expand_path …)`,
   * `ROOT=$(pwd)`) protects its whole folder: nothing the command writes anywhere in the workspace
   * is committed ("its .envrc loads what cannot be told here"), the command exiting 0. At fault:
   * core envrc-references.ts envrcReferences (a variable the file sets is left unexpanded: the
   * `assigned` set; `expand_path`/`$(pwd)` substitutions are unclear), with landing-extras.ts
   * envrcRules protecting the folder whole.
   */
  it.each([
    ['F3', 'export VIRTUAL_ENV=$PWD/.venv\nPATH_add "$VIRTUAL_ENV/bin"\n'],
    ['F4', 'export KUBECONFIG="$(expand_path .kube/config)"\n'],
    ['F5', 'ROOT=$(pwd)\nexport PATH="$ROOT/bin:$PATH"\n'],
  ])('%s. an everyday .envrc (%j): an ordinary edit of src/ lands', async (id, envrc) => {
    const s = scene();
    writeFileSync(join(s.ws, '.envrc'), envrc);
    const r = await runDaemonLike(id, s, 'echo ok > src/ok.txt');
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(s.ws, 'src', 'ok.txt'))).toBe(true);
  });
});

/*
 * FINDING E (h115): an `.envrc` is a bash script direnv runs at the next `cd`; the programs it runs
 * by path other than through direnv's stdlib words (`./tools/env.sh` as a command, `eval
 * "$(tools/env.sh)"`, `bash tools/env.sh`, `export X=$(tools/env.sh)`) are not among its landings:
 * core envrc-references.ts envrcReferences takes such a line's command for one that loads nothing
 * (its switch's default) and `$(…)` for an unclear word only where a stdlib command's argument. A
 * command then writes the missing program, and the host's next `cd` runs it (shown here by bash
 * sourcing the .envrc, as direnv does: direnv is not installed here). E6: the same program there on
 * the host, edited. E8: what a sourced file itself sources (only the .envrc's own text is read).
 * E9: a comment line ending in a backslash: envrcReferences joins the next line to it before it
 * strips comments, bash does not, so the next line's `source_env` is missed (as V3 for git config).
 */
describe('h115: what an .envrc runs other than by direnv\'s stdlib', { timeout: 120_000 }, () => {
  const cases = [
    ['E1', './tools/env.sh'],
    ['E2', 'eval "$(tools/env.sh)"'],
    ['E3', 'bash tools/env.sh'],
    ['E4', 'export FOO="$(tools/env.sh)"'],
    ['E5', 'source_env_if_exists .envrc.local; tools/env.sh'],
  ] as const;
  it.each(cases)('%s. the workspace .envrc runs `%s` (tools/env.sh missing): the command\'s tools/env.sh does not land, and sourcing the .envrc runs none', async (id, line) => {
    const s = scene();
    const mark = join(s.root, `pwned-${id}`);
    writeFileSync(join(s.ws, '.envrc'), `${line}\n`);
    await runDaemonLike(id, s, `mkdir -p tools && ${program(mark)} > tools/env.sh && chmod +x tools/env.sh`);
    try {
      execFileSync('bash', ['-c', 'source_env_if_exists() { :; }; . ./.envrc'], { cwd: s.ws, stdio: 'pipe' });
    } catch {
      // the mark tells
    }
    console.log(`h115 ${id}: landed=${existsSync(join(s.ws, 'tools', 'env.sh'))} sourcing the .envrc ran it=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(join(s.ws, 'tools', 'env.sh'))).toBe(false);
  });
  it('E6. the workspace .envrc runs `./tools/env.sh`, which the host has: the command\'s edit of it does not land', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-E6');
    mkdirSync(join(s.ws, 'tools'));
    writeFileSync(join(s.ws, 'tools', 'env.sh'), '#!/bin/sh\nexport A=1\n', { mode: 0o755 });
    writeFileSync(join(s.ws, '.envrc'), './tools/env.sh\n');
    await runDaemonLike('E6', s, `echo 'touch ${mark}' >> tools/env.sh`);
    try {
      execFileSync('bash', ['-c', '. ./.envrc'], { cwd: s.ws, stdio: 'pipe' });
    } catch {
      // the mark tells
    }
    console.log(`h115 E6: sourcing the .envrc ran the command's line=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
  });
  /*
   * FINDING E7 (h115; a trade-off the code makes on purpose: envrc-references.ts leaves out what
   * lies in node_modules, as `PATH_add node_modules/.bin` refused every `npm install`): with
   * `PATH_add node_modules/.bin` (what `layout node` does too), a command's node_modules/.bin/git
   * lands, and after the next `cd` the person's own `git` is the command's program.
   */
  it('E7. the workspace .envrc says `PATH_add node_modules/.bin`: a command\'s node_modules/.bin/git does not land', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-E7');
    writeFileSync(join(s.ws, '.envrc'), 'PATH_add node_modules/.bin\n');
    await runDaemonLike('E7', s, `mkdir -p node_modules/.bin && ${program(mark)} > node_modules/.bin/git && chmod +x node_modules/.bin/git`);
    try {
      execFileSync('bash', ['-c', 'PATH_add() { PATH="$PWD/$1:$PATH"; }; . ./.envrc; git status'], { cwd: s.ws, stdio: 'pipe' });
    } catch {
      // the mark tells
    }
    console.log(`h115 E7: landed=${existsSync(join(s.ws, 'node_modules', '.bin', 'git'))} the person's git ran it=${existsSync(mark)}`);
    expect(existsSync(join(s.ws, 'node_modules', '.bin', 'git'))).toBe(false);
  });
  it('E8. the workspace .envrc sources lib.sh (there, protected), which sources more.sh (missing): the command\'s more.sh does not land', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-E8');
    writeFileSync(join(s.ws, '.envrc'), 'source_env lib.sh\n');
    writeFileSync(join(s.ws, 'lib.sh'), '. ./more.sh\n');
    await runDaemonLike('E8', s, `${program(mark)} > more.sh`);
    try {
      execFileSync('bash', ['-c', 'source_env() { . "./$1"; }; . ./.envrc'], { cwd: s.ws, stdio: 'pipe' });
    } catch {
      // the mark tells
    }
    console.log(`h115 E8: landed=${existsSync(join(s.ws, 'more.sh'))} sourcing the .envrc ran it=${existsSync(mark)}`);
    expect(existsSync(join(s.ws, 'more.sh'))).toBe(false);
  });
  it('E9. the workspace .envrc has a comment line ending in a backslash, then `source_env lib.sh` (missing): the command\'s lib.sh does not land', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-E9');
    writeFileSync(join(s.ws, '.envrc'), '# load the local settings \\\nsource_env lib.sh\n');
    await runDaemonLike('E9', s, `${program(mark)} > lib.sh`);
    try {
      execFileSync('bash', ['-c', 'source_env() { . "./$1"; }; . ./.envrc'], { cwd: s.ws, stdio: 'pipe' });
    } catch {
      // the mark tells
    }
    console.log(`h115 E9: landed=${existsSync(join(s.ws, 'lib.sh'))} sourcing the .envrc ran it=${existsSync(mark)}`);
    expect(existsSync(join(s.ws, 'lib.sh'))).toBe(false);
  });
});

/*
 * FINDING G (h115): the program paths of a git alias are read word by word on spaces and quotes
 * only (core git-config.ts gitConfigProgramWords), so shell syntax glued to a path makes another
 * word: `!f() { tools/st.sh; }; f` protects `tools/st.sh;`, `!tools/st.sh>/dev/null` protects
 * `tools/st.sh>/dev/null`, and `!"$(git rev-parse --show-toplevel)"/tools/st.sh` is skipped (a word
 * starting with `-` is an option). The program git runs is none of them: the command writes it and
 * the host's `git st` runs it.
 */
describe('h115: a git alias\'s program glued to shell syntax', { timeout: 120_000 }, () => {
  const cases = [
    ['G1', '!f() { tools/st.sh; }; f'],
    ['G2', '!tools/st.sh>/dev/null'],
    ['G3', '!"$(git rev-parse --show-toplevel)"/tools/st.sh'],
  ] as const;
  it.each(cases)('%s. alias.st is `%s` (tools/st.sh missing): the command\'s program does not land, and the host\'s `git st` runs none', async (id, alias) => {
    const s = scene();
    const mark = join(s.root, `pwned-${id}`);
    execFileSync('git', ['config', 'alias.st', alias], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike(id, s, `mkdir -p tools && ${program(mark)} > tools/st.sh && chmod +x tools/st.sh`);
    hostGit(s, s.ws, 'st');
    console.log(`h115 ${id}: landed=${existsSync(join(s.ws, 'tools', 'st.sh'))} host git st ran it=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(join(s.ws, 'tools', 'st.sh'))).toBe(false);
  });
  it('G4. alias.st is `!sh -c \'tools/st.sh\'` (tools/st.sh missing): the command\'s program does not land (holds)', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-G4');
    execFileSync('git', ['config', 'alias.st', "!sh -c 'tools/st.sh'"], { cwd: s.ws, env: gitEnv(s.home) });
    await runDaemonLike('G4', s, `mkdir -p tools && ${program(mark)} > tools/st.sh && chmod +x tools/st.sh`);
    hostGit(s, s.ws, 'st');
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(join(s.ws, 'tools', 'st.sh'))).toBe(false);
  });
});

describe('h115: git config syntax around core.hooksPath (a nested repository)', { timeout: 120_000 }, () => {
  it.each([
    ['V1', '[core]\n\thooksPath = hk # the team\'s hooks\n'],
    ['V2', '[core]\n\thooksPath = "hk"\n'],
    ['V4', '[core]\r\n\thooksPath = hk\r\n'],
  ])('%s. sub/.git/config ends with %j: the command\'s sub/hk/pre-commit does not land, and the host\'s next commit there runs none', async (id, text) => {
    const s = scene();
    const mark = join(s.root, `pwned-${id}`);
    execFileSync('git', ['init', '-q', 'sub'], { cwd: s.ws, env: gitEnv(s.home) });
    writeFileSync(join(s.ws, 'sub', '.git', 'config'), readFileSync(join(s.ws, 'sub', '.git', 'config'), 'utf8') + text);
    const seen = execFileSync('git', ['config', '--get', 'core.hooksPath'], { cwd: join(s.ws, 'sub'), encoding: 'utf8', env: gitEnv(s.home) }).trim();
    await runDaemonLike(id, s, `mkdir -p sub/hk && ${program(mark)} > sub/hk/pre-commit && chmod +x sub/hk/pre-commit`);
    hostGit(s, join(s.ws, 'sub'), 'commit', '-q', '--allow-empty', '-m', 'x');
    console.log(`h115 ${id}: git reads core.hooksPath=${JSON.stringify(seen)} landed=${existsSync(join(s.ws, 'sub', 'hk', 'pre-commit'))} ran=${existsSync(mark)}`);
    expect(existsSync(mark)).toBe(false);
  });
  /*
   * FINDING V3 (h115): a comment line of a host config that ends in a backslash. git ends a comment
   * at the newline (it reads core.hooksPath = hk here); core git-config.ts parseGitConfig joins the
   * next line to it first (its continuation loop runs before comments are stripped), so the
   * hooksPath line is read as part of the comment and sub/hk is no landing: the command's hook
   * lands and the host's next commit there runs it.
   */
  it('V3. sub/.git/config ends with a comment line ending in a backslash, then hooksPath = hk: the command\'s sub/hk/pre-commit does not land, and the host\'s next commit there runs none', async () => {
    const s = scene();
    const mark = join(s.root, 'pwned-V3');
    execFileSync('git', ['init', '-q', 'sub'], { cwd: s.ws, env: gitEnv(s.home) });
    writeFileSync(join(s.ws, 'sub', '.git', 'config'), `${readFileSync(join(s.ws, 'sub', '.git', 'config'), 'utf8')}[core]\n\t# hooks: see docs \\\n\thooksPath = hk\n`);
    const seen = execFileSync('git', ['config', '--get', 'core.hooksPath'], { cwd: join(s.ws, 'sub'), encoding: 'utf8', env: gitEnv(s.home) }).trim();
    await runDaemonLike('V3', s, `mkdir -p sub/hk && ${program(mark)} > sub/hk/pre-commit && chmod +x sub/hk/pre-commit`);
    hostGit(s, join(s.ws, 'sub'), 'commit', '-q', '--allow-empty', '-m', 'x');
    console.log(`h115 V3: git reads core.hooksPath=${JSON.stringify(seen)} landed=${existsSync(join(s.ws, 'sub', 'hk', 'pre-commit'))} ran=${existsSync(mark)}`);
    expect(seen).toBe('hk');
    expect(existsSync(mark)).toBe(false);
  });
});
