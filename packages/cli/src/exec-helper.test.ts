// The exec helper (exec-server.ts, bin/exec-client.cjs): `aalis exec` run by a kept process of the
// user's own. Built here from the bundle as exec-bundle.test.ts builds it, started by a real
// `aalis exec` run or by hand, and driven by the real client; every command runs in a real
// bubblewrap sandbox. Each test's helper lives in a runtime directory of its own under /run (the
// client's XDG_RUNTIME_DIR), never in the machine's own.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { execHelperState } from './doctor.js';

const here = join(import.meta.dirname, '..');
const out = join(here, '.aalis-tmp');
const bundle = join(out, `aalis-exec-helper-${process.pid}.cjs`);
// bin/aalis.cjs for `aalis exec` and the helper, with this bundle
const runner = join(out, `run-helper-${process.pid}.mjs`);
// the client alone: prints where its socket is, or what it did with one request
const driver = join(out, `drive-helper-${process.pid}.mjs`);
const client = join(here, 'bin', 'exec-client.cjs');
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-exec-helper-')));
const workspace = join(root, 'workspace');
const data = join(root, 'data');
const home = join(root, 'home');
const isRoot = process.getuid?.() === 0;
let runtimes: string[] = [];
let helpers: ChildProcess[] = [];

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  for (const d of [workspace, join(workspace, 'sub'), home]) mkdirSync(d, { recursive: true });
  const { bundleExec } = (await import(join(here, 'scripts', 'bundle.mjs'))) as { bundleExec(outfile: string): Promise<unknown> };
  await bundleExec(bundle);
  writeFileSync(runner, `import { execEntry } from ${JSON.stringify(client)};\nawait execEntry(${JSON.stringify(bundle)}, ${JSON.stringify(runner)});\n`);
  writeFileSync(
    driver,
    `import { writeFileSync } from 'node:fs';
import { helperSocket, helperWho, viaHelper } from ${JSON.stringify(client)};
const socket = helperSocket(${JSON.stringify(bundle)});
if (process.argv[2] === 'where') {
  process.stdout.write(JSON.stringify({ socket: socket ?? null, who: helperWho(${JSON.stringify(bundle)}) }));
  process.exit(0);
}
const result = socket === undefined ? { fallback: 'off' } : await viaHelper(${JSON.stringify(bundle)}, socket, process.argv.slice(2));
writeFileSync(process.env.DRIVER_OUT, JSON.stringify(result));
await Promise.all([process.stdout, process.stderr].map((s) => new Promise((r) => s.write('', r))));
process.exit('status' in result ? result.status : 99);
`,
  );
}, 120_000);
afterEach(() => {
  for (const h of helpers) h.kill('SIGKILL');
  helpers = [];
  for (const r of runtimes) {
    spawnSync('pkill', ['-KILL', '-f', `__exec-helper ${r}/`]);
    rmSync(r, { recursive: true, force: true });
  }
  runtimes = [];
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  for (const f of [bundle, `${bundle}.cache`, runner, driver]) rmSync(f, { force: true });
});

/** A runtime directory of this test's own under /run, as a login session's /run/user/<uid> is. */
function runtimeDir(mode = 0o700): string {
  const dir = mkdtempSync('/run/aalis-test-');
  chmodSync(dir, mode);
  runtimes.push(dir);
  return dir;
}

const baseEnv = (runtime: string, more: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, AALIS_DATA: data, XDG_RUNTIME_DIR: runtime, ...more });

/** Where the client's socket is for `runtime`, and its `who`. */
function where(runtime: string): { socket: string | null; who: string } {
  const r = spawnSync(process.execPath, [driver, 'where'], { env: baseEnv(runtime), encoding: 'utf8' });
  return JSON.parse(r.stdout) as { socket: string | null; who: string };
}

type Drive = { status: number | null; stdout: string; stderr: string; result: { status?: number; fallback?: string } };

/** One request through the client (no in-process run after it): what it printed and what it did. */
function drive(runtime: string, args: string[], options: { env?: Record<string, string>; cwd?: string; input?: string; umask?: string } = {}): Drive {
  const result = join(root, `drive-${Math.random().toString(36).slice(2)}.json`);
  const argv = options.umask ? ['sh', '-c', `umask ${options.umask} && exec "$@"`, 'sh', process.execPath, driver, ...args] : [process.execPath, driver, ...args];
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: options.cwd ?? workspace, env: baseEnv(runtime, { ...options.env, DRIVER_OUT: result }), encoding: 'utf8', input: options.input ?? '', timeout: 60_000 });
  const did = existsSync(result) ? (JSON.parse(readFileSync(result, 'utf8')) as Drive['result']) : {};
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, result: did };
}

/** A helper started by hand (as the client starts one), once its socket answers. */
async function startHelper(runtime: string, env: Record<string, string> = {}, who?: string): Promise<{ socket: string; child: ChildProcess; token: string; who: string }> {
  const w = where(runtime);
  mkdirSync(join(runtime, 'aalis-exec'), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('hex');
  const child = spawn(process.execPath, [runner, '__exec-helper', w.socket!, who ?? w.who], { env: baseEnv(runtime, { ...env, AALIS_EXEC_HELPER_TOKEN: token }), stdio: 'ignore', cwd: '/' });
  helpers.push(child);
  // answering (a socket a dead helper left is there before the new one binds)
  await until(() => new Promise<boolean>((resolve) => {
    const c = createConnection(w.socket!, () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  }));
  // and its pid written, where clients find it to read its token
  await until(() => existsSync(w.socket!.replace(/\.sock$/, '.pid')));
  return { socket: w.socket!, child, token, who: who ?? w.who };
}

/** A raw client: sends `request`, then `go` when accepted (unless `go` is false); resolves with what it got once `after` is done. */
function rawClient(socket: string, request: object, after: (c: Socket, accepted: boolean) => void, go = true): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const { token, ...rest } = request as { token: string };
    const c = createConnection(socket, () => c.write(`${JSON.stringify({ token })}\n${JSON.stringify(rest)}\n`));
    c.on('data', (b: Buffer) => {
      got += b.toString();
      if (got.includes('"accepted"') && !got.includes('"go-sent"')) {
        got += '"go-sent"';
        if (go) c.write('{"t":"go"}\n', () => after(c, true));
        else after(c, true);
      } else if (got.includes('"declined"')) after(c, false);
    });
    c.on('error', () => {});
    c.on('close', () => resolve(got));
  });
}

/**
 * The sandbox launchers of the helper `pid` (python, its last argument that pid); a launcher's
 * fork for a run, which has its argv until it execs, is not one.
 */
function launchersOf(pid: number): number[] {
  const parents = new Map<number, string | undefined>();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (/python/.test(argv[0] ?? '') && argv[1] === '-I' && argv.at(-1) === String(pid)) parents.set(Number(p), /^PPid:\s*(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1]);
    } catch {
      // gone
    }
  }
  return [...parents].filter(([, parent]) => !parents.has(Number(parent))).map(([p]) => p);
}

/** The prepared sandboxes' shims (sandbox-linux prepared.ts, `aalis-prepared` in their argv) under the process `pid`: each one's host pid and start time (field 22 of its stat). */
function shimsUnder(pid: number): { pid: number; start: string }[] {
  const parentOf = (p: string) => /^PPid:\s*(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1];
  const out: { pid: number; start: string }[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (!readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('aalis-prepared')) continue;
      let up: string | undefined = p;
      while (up !== undefined && up !== '0' && up !== String(pid)) up = parentOf(up);
      if (up === String(pid)) out.push({ pid: Number(p), start: startTimeOf(readFileSync(`/proc/${p}/stat`, 'utf8')) });
    } catch {
      // gone
    }
  }
  return out;
}

/** Field 22 (the start time, in clock ticks since boot: the same in every pid namespace) of a /proc/<pid>/stat line. */
function startTimeOf(stat: string): string {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

async function until(ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether a process whose command line starts with `marker` runs (the sandboxed command, not the client naming it). */
const running = (marker: string) => spawnSync('pgrep', ['-f', `^${marker}`]).status === 0;

describe.skipIf(!isRoot)('the exec helper', () => {
  it('is started by a run that found none, and runs the next ones as that run would have', async () => {
    const runtime = runtimeDir();
    const first = spawnSync(process.execPath, [runner, 'exec', '--', 'sh', '-c', 'echo first'], { cwd: workspace, env: baseEnv(runtime), encoding: 'utf8', timeout: 60_000 });
    expect(first.stdout).toBe('first\n');
    const { socket } = where(runtime);
    await until(() => lstatSync(socket!, { throwIfNoEntry: false })?.isSocket() === true);
    // this user's alone: the directory unreadable to others, the socket in it
    expect(lstatSync(join(runtime, 'aalis-exec')).mode & 0o777).toBe(0o700);
    const r = drive(runtime, ['--', 'sh', '-c', 'echo out; echo err >&2; pwd; echo "$FOO"; exit 7'], { cwd: join(workspace, 'sub'), env: { FOO: 'from the client' } });
    expect(r.result).toEqual({ status: 7 });
    expect(r.status).toBe(7);
    expect(r.stdout).toBe(`out\n${join(workspace, 'sub')}\nfrom the client\n`);
    expect(r.stderr).toContain('err\n');
    // the next client's environment, not the last one's
    expect(drive(runtime, ['--', 'sh', '-c', 'echo "[$FOO]"'], { env: { FOO: 'second' } }).stdout).toBe('[second]\n');
    expect(drive(runtime, ['--', 'sh', '-c', 'echo "[$FOO]"']).stdout).toBe('[]\n');
  }, 120_000);

  it('is what `aalis doctor` reports: where, and whether it runs', async () => {
    const runtime = runtimeDir();
    const env = baseEnv(runtime);
    const { socket } = where(runtime);
    expect(execHelperState(bundle, env)).toMatchObject({ socket, pid: null, detail: expect.stringContaining('not running') });
    const { child } = await startHelper(runtime);
    expect(execHelperState(bundle, env)).toMatchObject({ socket, pid: child.pid, detail: expect.stringContaining(`running (pid ${child.pid})`) });
    expect(execHelperState(bundle, { ...env, AALIS_EXEC_HELPER: 'off' })).toMatchObject({ socket: null, detail: expect.stringContaining('AALIS_EXEC_HELPER=off') });
  }, 120_000);

  it("gives each command its client's umask", async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    for (const mask of ['077', '022', '077', '002']) {
      const r = drive(runtime, ['--', 'sh', '-c', `umask; echo x > f-${mask}`], { umask: mask });
      expect(r.result).toEqual({ status: 0 });
      expect(r.stdout).toBe(`0${mask}\n`);
      expect(lstatSync(join(workspace, `f-${mask}`)).mode & 0o777).toBe(0o666 & ~Number.parseInt(mask, 8));
      rmSync(join(workspace, `f-${mask}`));
    }
  }, 120_000);

  it('leaves an argument whose bytes are not UTF-8 to the client\'s own run, which refuses it as a one-shot run does', async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    // the argument is byte 0xff: node reads it as U+FFFD, and exec's check of it reads /proc/self
    const result = join(root, 'lossy.json');
    const r = spawnSync('sh', ['-c', `exec "$0" "$1" --data "$(printf 'd\\377')" -- true`, process.execPath, driver], { cwd: workspace, env: baseEnv(runtime, { DRIVER_OUT: result }), encoding: 'utf8' });
    expect(JSON.parse(readFileSync(result, 'utf8'))).toEqual({ fallback: 'lossy' });
    expect(r.status).toBe(99);
    const own = spawnSync('sh', ['-c', `exec "$0" "$1" exec --data "$(printf 'd\\377')" -- true`, process.execPath, runner], { cwd: workspace, env: baseEnv(runtime), encoding: 'utf8' });
    expect(own.status).toBe(2);
    expect(own.stderr).toContain('not UTF-8');
  }, 120_000);

  it('passes standard input when asked (--stdin), and usage errors as exec gives them', async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    const r = drive(runtime, ['--stdin', '--', 'cat'], { input: 'hello\nworld\n' });
    expect(r.result).toEqual({ status: 0 });
    expect(r.stdout).toBe('hello\nworld\n');
    const bad = drive(runtime, ['--timeout', 'x', '--', 'true']);
    expect(bad.result).toEqual({ status: 2 });
    expect(bad.stderr).toContain("--timeout 'x' is not a positive number");
  }, 120_000);

  it("ends the command and its sandbox on the client's SIGINT, and when the client is killed", async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    // SIGINT: exits 130 once the sandbox is gone, as a one-shot run does
    const result = join(root, 'sigint.json');
    const c = spawn(process.execPath, [driver, '--', 'sleep', '31.25'], { cwd: workspace, env: baseEnv(runtime, { DRIVER_OUT: result }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    c.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    await until(() => running('sleep 31.25'));
    c.kill('SIGINT');
    const code = await new Promise<number | null>((r) => c.on('exit', r));
    expect(code).toBe(130);
    expect(stderr).toContain('SIGINT received; the command was killed and its sandbox removed');
    expect(running('sleep 31.25')).toBe(false);
    // SIGKILL: nobody to tell, the helper ends the command on the hang-up and takes the next one
    const k = spawn(process.execPath, [driver, '--', 'sleep', '32.25'], { cwd: workspace, env: baseEnv(runtime, { DRIVER_OUT: join(root, 'kill.json') }), stdio: 'ignore' });
    await until(() => running('sleep 32.25'));
    k.kill('SIGKILL');
    await until(() => !running('sleep 32.25'), 15_000);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
  }, 120_000);

  it('declines a second client while it runs one, and a client of another node or user', async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    const first = spawn(process.execPath, [driver, '--', 'sleep', '33.25'], { cwd: workspace, env: baseEnv(runtime, { DRIVER_OUT: join(root, 'first.json') }), stdio: 'ignore' });
    await until(() => running('sleep 33.25'));
    expect(drive(runtime, ['--', 'true']).result).toEqual({ fallback: 'declined' });
    first.kill('SIGINT');
    await new Promise((r) => first.on('exit', r));
    // another install of the same build has a helper of its own: its control plane is another
    const { helperSocket } = (await import(client)) as { helperSocket(bundle: string, env: NodeJS.ProcessEnv): string | undefined };
    mkdirSync(join(root, 'other-install'), { recursive: true });
    copyFileSync(bundle, join(root, 'other-install', 'aalis-exec.cjs'));
    copyFileSync(`${bundle}.cache`, join(root, 'other-install', 'aalis-exec.cjs.cache'));
    const mine = helperSocket(bundle, { XDG_RUNTIME_DIR: runtime });
    const theirs = helperSocket(join(root, 'other-install', 'aalis-exec.cjs'), { XDG_RUNTIME_DIR: runtime });
    expect(mine?.slice(0, -13)).toBe(theirs?.slice(0, -13)); // the same build (its digest)...
    expect(mine).not.toBe(theirs); // ...another place
    // started for another `who`: this client is not its
    const other = runtimeDir();
    await startHelper(other, {}, 'v0.0.0:/elsewhere/node:1000:1000:1000');
    expect(drive(other, ['--', 'true']).result).toEqual({ fallback: 'declined' });
  }, 120_000);

  it('ends the command of a client gone right after its go (before exec listens for signals), runs nothing for one gone before it, and stays free for the next', async () => {
    const runtime = runtimeDir();
    const { socket, token, who } = await startHelper(runtime);
    const marker = join(workspace, 'gone-marker');
    const request = { v: 1, who, token, argv: ['--', 'sh', '-c', `sleep 1; echo ran >> ${marker}`], cwd: workspace, env: baseEnv(runtime), umask: 0o022, interactive: false };
    for (const [how, go] of [['end', true], ['destroy', true], ['destroy', false]] as const) {
      // `go` and the hang-up in one go: the hang-up comes while the runtime starts, before exec
      // listens for interrupts (held for it: without that, the command ran to its end); without
      // `go` nothing is started
      const accepted = await new Promise<boolean>((resolve) => {
        void rawClient(
          socket,
          request,
          (c, ok) => {
            if (how === 'end') c.end();
            else c.destroy();
            resolve(ok);
          },
          go,
        );
      });
      expect(accepted).toBe(true);
      // free at once (nothing was started), or once what was started is ended (a hang-up races the start)
      let next: Drive['result'] = {};
      await until(() => {
        next = drive(runtime, ['--', 'true']).result;
        return next.fallback !== 'declined';
      }, 10_000);
      expect(next).toEqual({ status: 0 });
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  // Found by CI: a run's release closed the services past the limit before the helper was free, and
  // a close waits for its launcher and cgroup to go, so a client right after an exit was declined.
  // Every drive is an environment of its own (DRIVER_OUT), so each one after the second closes one.
  it('is free for the next client at once while it closes a service past its limit', async () => {
    const runtime = runtimeDir();
    const { socket, token, who, child } = await startHelper(runtime);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
    // the two services' launchers stopped: the close of the oldest, after the next run, waits 2 s for its own
    const launchers = launchersOf(child.pid!);
    expect(launchers).toHaveLength(2);
    for (const pid of launchers) process.kill(pid, 'SIGSTOP');
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
    const got = await rawClient(socket, { v: 1, who, token, argv: ['--', 'true'], cwd: workspace, env: baseEnv(runtime), umask: 0o022, interactive: false }, () => {});
    expect(got).not.toContain('declined');
    expect(got).toContain('"exit"');
  }, 120_000);

  // Each one-shot run had a session (so a TMPDIR, so a policy) of its own, and the helper's
  // service, which prepares the next sandbox of a policy that recurs, never prepared one: every run
  // through the helper set its sandbox up cold (kept-sessions.ts).
  it('gives runs of one shape one session while it lives, so the next run finds its sandbox prepared, and another shape another', async () => {
    const runtime = runtimeDir();
    const { child } = await startHelper(runtime, { AALIS_EXEC_HELPER_IDLE: '3' });
    const env = baseEnv(runtime);
    const run = (args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) => {
      const r = spawnSync(process.execPath, [runner, 'exec', '--network', 'off', ...args], { cwd: options.cwd ?? workspace, env: { ...env, ...options.env }, encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout;
    };
    const tmpOf = (options: { cwd?: string; env?: Record<string, string> } = {}) => run(['--', 'sh', '-c', 'echo "$TMPDIR"'], options).trim();
    const first = tmpOf();
    expect(first).toMatch(/\/session-/);
    expect(tmpOf()).toBe(first);
    // another directory, another environment, another tier: another session
    const others = [tmpOf({ cwd: join(workspace, 'sub') }), tmpOf({ env: { FOO: 'x' } }), run(['--tier', 'full', '--', 'sh', '-c', 'echo "$TMPDIR"']).trim()];
    expect(new Set([first, ...others]).size).toBe(4);
    // the shape run twice: its next sandbox is being prepared, and the next run is that sandbox (the shim's process, exec'd into the command)
    expect(tmpOf()).toBe(first);
    await until(() => shimsUnder(child.pid!).length > 0);
    const shims = shimsUnder(child.pid!);
    const line = run(['--', 'sh', '-c', 'read -r l < /proc/self/stat; echo "$l"']);
    expect(shims.map((s) => s.start)).toContain(startTimeOf(line));
    // a file left in a session's temp is kept when the helper ends; the empty ones are removed
    run(['--', 'sh', '-c', 'echo kept > "$TMPDIR/left"'], { cwd: join(workspace, 'sub') });
    expect(await new Promise<number | null>((r) => child.on('exit', r))).toBe(0);
    expect(existsSync(first)).toBe(false);
    expect(readFileSync(join(others[0]!, 'left'), 'utf8')).toBe('kept\n');
    expect(existsSync(others[1]!)).toBe(false);
  }, 120_000);

  // Found by an attack (h80): --network was not in the shape, so a readonly run without network
  // planted bytecode under PYTHONPYCACHEPREFIX (the session temp) that a later networked run of the
  // same directory ran; and a readonly run's temp is the one thing of it that outlives it.
  it('never gives a readonly run what an earlier run left in its temp, nor a networked run an offline run\'s temp', async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    // a readonly command is asked at the terminal (approved once here, through a pseudo-terminal)
    const pty = join(import.meta.dirname, 'fixtures', 'pty-answer.py');
    const run = (args: string[]) => {
      const r = spawnSync('python3', [pty, process.execPath, runner, 'exec', '--tier', 'readonly', ...args], { cwd: workspace, env: baseEnv(runtime, { ANSWER: 'o' }), encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stdout).toBe(0);
      return r.stdout;
    };
    const tmpOf = (flags: string[]) => /tmp=(\S+)/.exec(run([...flags, '--', 'sh', '-c', 'echo "tmp=$TMPDIR"']))?.[1];
    const offline = tmpOf(['--network', 'off']);
    expect(offline).toMatch(/\/session-/);
    // nothing left in it: the same session (and the sandbox prepared for it) next time
    expect(tmpOf(['--network', 'off'])).toBe(offline);
    expect(tmpOf(['--network', 'on'])).not.toBe(offline);
    expect(tmpOf(['--backend', 'linux', '--network', 'off'])).toBe(offline);
    run(['--network', 'off', '--', 'sh', '-c', 'echo planted > "$TMPDIR/left"']);
    expect(run(['--network', 'off', '--', 'sh', '-c', 'echo "left=$(cat "$TMPDIR/left" 2>/dev/null || echo none)"'])).toContain('left=none');
  }, 120_000);

  // A kept session's grant ("remember for this session") would answer the next runs of its shape;
  // a one-shot run's grant never met another run. The session that holds one is not given again.
  it('never lets a grant remembered in one run answer the next: that run gets another session', async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    const outside = join(root, 'outside-grant');
    mkdirSync(outside, { recursive: true });
    const pty = join(import.meta.dirname, 'fixtures', 'pty-answer.py');
    // the same environment each time (ANSWER included): one shape
    const run = (file: string) => {
      const r = spawnSync('python3', [pty, process.execPath, runner, 'exec', '--network', 'off', '--', 'sh', '-c', `echo "tmp=$TMPDIR"; echo x > ${join(outside, file)}`], { cwd: workspace, env: baseEnv(runtime, { ANSWER: 'r' }), encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stdout).toBe(0);
      return { asked: r.stdout.includes('approve once'), tmp: /tmp=(\S+)/.exec(r.stdout)?.[1] };
    };
    const first = run('one');
    expect(first.asked).toBe(true);
    // a new file in the same directory: the grant of the first run (writing in it) would cover it
    const second = run('two');
    expect(second.asked).toBe(true);
    expect(second.tmp).not.toBe(first.tmp);
    expect(readFileSync(join(outside, 'two'), 'utf8')).toBe('x\n');
  }, 180_000);

  // Found by the same attack: a SIGTERM (a logout's) ended the helper before it removed the empty
  // temps, one per shape for good; and a client whose command printed much to a pipe said the
  // helper had ended without saying how the command ended (the connection closed while it flushed).
  it('ends on SIGTERM as when idle (after the command under way), and says nothing false after much output', async () => {
    const runtime = runtimeDir();
    const { child } = await startHelper(runtime);
    const run = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [runner, 'exec', '--network', 'off', ...args], { cwd: workspace, env: baseEnv(runtime, env), encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    const big = run(['--', 'seq', '1', '150000']);
    expect(big.status).toBe(0);
    expect(big.stdout.endsWith('\n150000\n')).toBe(true);
    expect(big.stderr).not.toContain('ended before');
    const empty = run(['--', 'sh', '-c', 'echo "$TMPDIR"'], { SHAPE: 'a' }).stdout.trim();
    const left = run(['--', 'sh', '-c', 'echo kept > "$TMPDIR/left"; echo "$TMPDIR"'], { SHAPE: 'b' }).stdout.trim();
    expect(existsSync(empty)).toBe(true);
    // a command under way when the signal comes ends first, and its result reaches its client
    const marker = join(workspace, `term-${process.pid}`);
    const slow = spawn(process.execPath, [runner, 'exec', '--network', 'off', '--', 'sh', '-c', `sleep 1; echo done > ${marker}; echo ok`], { cwd: workspace, env: baseEnv(runtime), stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    slow.stdout.on('data', (b: Buffer) => (said += b.toString()));
    await until(() => running('sleep 1'));
    const ended = new Promise<number | null>((r) => child.on('exit', r));
    child.kill('SIGTERM');
    expect(await new Promise<number | null>((r) => slow.on('exit', r))).toBe(0);
    expect(said).toBe('ok\n');
    expect(await ended).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('done\n');
    rmSync(marker);
    expect(existsSync(empty)).toBe(false);
    expect(readFileSync(join(left, 'left'), 'utf8')).toBe('kept\n');
  }, 120_000);

  it('is not used when its directory or socket is not this user\'s alone, nor when none is allowed', async () => {
    const runtime = runtimeDir();
    const { socket } = await startHelper(runtime);
    chmodSync(join(runtime, 'aalis-exec'), 0o755);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ fallback: 'unsafe' });
    chmodSync(join(runtime, 'aalis-exec'), 0o700);
    spawnSync('chown', ['65534', socket]);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ fallback: 'unsafe' });
    spawnSync('chown', ['0', socket]);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
    // off by choice, outside /run, or no runtime directory for an ordinary user: no helper at all
    expect(drive(runtime, ['--', 'true'], { env: { AALIS_EXEC_HELPER: 'off' } }).result).toEqual({ fallback: 'off' });
    const asNobody = (env: Record<string, string>) => {
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, driver, 'where'], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
      return (JSON.parse(r.stdout) as { socket: string | null }).socket;
    };
    const theirs = runtimeDir();
    spawnSync('chown', ['65534:65534', theirs]);
    mkdirSync(join(root, 'outside-run'), { recursive: true });
    symlinkSync(join(root, 'outside-run'), join(theirs, 'out'));
    expect(asNobody({})).toBeNull();
    expect(asNobody({ XDG_RUNTIME_DIR: join(root, 'outside-run') })).toBeNull();
    // named under /run, really elsewhere: through `..`, or a symlink out of it
    expect(asNobody({ XDG_RUNTIME_DIR: '/run/..' })).toBeNull();
    expect(asNobody({ XDG_RUNTIME_DIR: `${theirs}/../../var/tmp` })).toBeNull();
    expect(asNobody({ XDG_RUNTIME_DIR: join(theirs, 'out') })).toBeNull();
    expect(asNobody({ XDG_RUNTIME_DIR: theirs })).toMatch(new RegExp(`^${theirs}/aalis-exec/[0-9a-f]{20}-[0-9a-f]{8}\\.sock$`));
  }, 120_000);

  it('is out of reach of every sandboxed command, one started before the helper bound included', async () => {
    const runtime = runtimeDir();
    const { socket } = where(runtime);
    // a command in a sandbox made before the helper exists looks once it does
    const flag = join(root, 'helper-up');
    const look = `import socket, os, time
while not os.path.exists(${JSON.stringify(flag)}): time.sleep(0.05)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(${JSON.stringify(socket)})
    print("REACHED")
except OSError as e:
    print("refused", e.errno)
print(sorted(os.listdir("/run")))`;
    writeFileSync(join(workspace, 'look.py'), look);
    const early = spawn(process.execPath, [runner, 'exec', '--', 'python3', 'look.py'], { cwd: workspace, env: baseEnv(runtime, { AALIS_EXEC_HELPER: 'off' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let earlyOut = '';
    early.stdout!.on('data', (b: Buffer) => (earlyOut += b.toString()));
    await new Promise((r) => setTimeout(r, 1500));
    await startHelper(runtime);
    writeFileSync(flag, '');
    // the same look on the host reaches it: what the sandbox refuses is there to reach
    expect(spawnSync('python3', [join(workspace, 'look.py')], { encoding: 'utf8' }).stdout).toMatch(/^REACHED\n/);
    await new Promise((r) => early.on('exit', r));
    expect(earlyOut).toMatch(/^refused 2\n/);
    expect(earlyOut).not.toContain('REACHED');
    // and one run by the helper itself
    const through = drive(runtime, ['--', 'python3', 'look.py']);
    expect(through.result).toEqual({ status: 0 });
    expect(through.stdout).toMatch(/^refused 2\n/);
  }, 120_000);

  it('serves no sandboxed command, even one whose workspace holds its socket (the runtime directory itself)', async () => {
    const runtime = runtimeDir();
    const { socket, who } = await startHelper(runtime);
    const escaped = join(root, 'ESCAPED');
    // run read-only in the runtime directory: /run is hidden, but the workspace is bound back, so
    // the socket and the pid file are there to see. It asks for --tier full, with the `who` a
    // client outside would send and the token it can find (none: the helper is not in its /proc)
    const attack = `const { createConnection } = require('node:net');
const { readFileSync } = require('node:fs');
let token = '';
try {
  const pid = readFileSync(${JSON.stringify(socket.replace(/\.sock$/, '.pid'))}, 'latin1');
  token = /AALIS_EXEC_HELPER_TOKEN=([0-9a-f]+)/.exec(readFileSync('/proc/' + pid + '/environ', 'latin1'))?.[1] ?? '';
  console.log('token read');
} catch (e) { console.log('token unreadable', e.code); }
const c = createConnection(${JSON.stringify(socket)}, () => c.write(JSON.stringify({ token }) + '\\n' + JSON.stringify({ v: 1, who: ${JSON.stringify(who)}, argv: ['--tier', 'full', '--', 'sh', '-c', 'echo escaped > ${escaped}'], cwd: '/', env: { PATH: '/usr/bin:/bin' }, umask: 18, interactive: false }) + '\\n'));
let got = '';
c.on('data', (b) => { got += b; if (got.includes('accepted')) c.write('{"t":"go"}\\n'); });
c.on('error', (e) => console.log('error', e.code));
c.on('close', () => console.log('answer', got.trim()));`;
    writeFileSync(join(runtime, 'attack.cjs'), attack);
    const r = spawnSync(process.execPath, [runner, 'exec', '--tier', 'readonly', '--', process.execPath, 'attack.cjs'], { cwd: runtime, env: baseEnv(runtime, { AALIS_EXEC_HELPER: 'off' }), encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout).toContain('token unreadable');
    expect(r.stdout).toContain("not this helper's token");
    await new Promise((res) => setTimeout(res, 1000));
    expect(existsSync(escaped)).toBe(false);
  }, 120_000);

  it("never connects where another user could swap the directory, nor for a client in another namespace", async () => {
    // root whose XDG_RUNTIME_DIR is still another user's (sudo -E): root's own /run instead
    const theirs = runtimeDir();
    spawnSync('chown', ['65534:65534', theirs]);
    expect(where(theirs).socket).toMatch(/^\/run\/aalis-exec\//);
    // root's own runtime directory inside theirs: they could rename it away and put another there
    mkdirSync(join(theirs, 'root-owned'), { mode: 0o700 });
    expect(where(join(theirs, 'root-owned')).socket).toMatch(/^\/run\/aalis-exec\//);
    const mine = runtimeDir();
    mkdirSync(join(mine, 'nested'), { mode: 0o700 });
    expect(where(join(mine, 'nested')).socket).toMatch(new RegExp(`^${mine}/nested/aalis-exec/`));
    // a client in a mount namespace of its own has another key (and its own helper)
    const runtime = runtimeDir();
    await startHelper(runtime);
    const outside = where(runtime).socket;
    const inside = spawnSync('unshare', ['-m', '--propagation', 'private', process.execPath, driver, 'where'], { env: baseEnv(runtime), encoding: 'utf8' });
    const inner = JSON.parse(inside.stdout) as { socket: string };
    expect(inner.socket).not.toBe(outside);
    expect(inner.socket.slice(0, -13)).toBe(outside!.slice(0, -13)); // the same build
  }, 120_000);

  it('is left by a client it does not answer in time (stopped), which runs the command itself, once', async () => {
    const runtime = runtimeDir();
    const { child } = await startHelper(runtime);
    const count = join(workspace, 'count-stopped');
    child.kill('SIGSTOP');
    try {
      const r = spawnSync(process.execPath, [runner, 'exec', '--', 'sh', '-c', `echo x >> ${count}`], { cwd: workspace, env: baseEnv(runtime), encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(0);
      expect(r.stderr).toContain('did not answer within 10 s; the command runs in this process');
    } finally {
      child.kill('SIGCONT');
    }
    // woken, it reads the request and the hang-up: no `go` came, so nothing is run there
    await new Promise((res) => setTimeout(res, 3000));
    expect(readFileSync(count, 'utf8')).toBe('x\n');
    rmSync(count);
  }, 120_000);

  it("sends a helper its standard input only for --stdin, whatever the helper asks", async () => {
    const runtime = runtimeDir();
    const { socket } = where(runtime);
    mkdirSync(join(runtime, 'aalis-exec'), { mode: 0o700 });
    // a helper that asks every client for its standard input and keeps what it gets
    const got = join(root, 'asked-stdin');
    const fake = `const { createServer } = require('node:net');
const { appendFileSync, writeFileSync } = require('node:fs');
createServer((c) => {
  let buf = '';
  c.on('data', (b) => {
    buf += b;
    for (let nl; (nl = buf.indexOf('\\n')) !== -1; buf = buf.slice(nl + 1)) {
      const f = JSON.parse(buf.slice(0, nl));
      if (f.token !== undefined) continue;
      if (f.v === 1) c.write('{"t":"accepted","pid":1}\\n');
      else if (f.t === 'go') c.write('{"t":"stdin"}\\n');
      else if (f.t === 'stdin') { appendFileSync(${JSON.stringify(got)}, JSON.stringify(f.data) + '\\n'); c.end('{"t":"exit","status":0}\\n'); }
    }
  });
}).listen(${JSON.stringify(socket)}, () => writeFileSync(${JSON.stringify(socket!.replace(/\.sock$/, '.pid'))}, String(process.pid)));`;
    const child = spawn(process.execPath, ['-e', fake], { env: { PATH: process.env.PATH ?? '', AALIS_EXEC_HELPER_TOKEN: 'f'.repeat(64) }, stdio: 'ignore' });
    helpers.push(child);
    await until(() => existsSync(socket!.replace(/\.sock$/, '.pid')));
    expect(drive(runtime, ['--', 'true'], { input: 'secret\n' }).result).toEqual({ status: 0 });
    expect(drive(runtime, ['--', 'cat', '--stdin'], { input: 'secret\n' }).result).toEqual({ status: 0 });
    expect(drive(runtime, ['--stdin', '--', 'cat'], { input: 'secret\n' }).result).toEqual({ status: 0 });
    expect(readFileSync(got, 'utf8')).toBe('""\n""\n"secret\\n"\n');
  }, 120_000);

  it('costs a connection without its token next to nothing: a short line, a few at once, a few seconds', async () => {
    const runtime = runtimeDir();
    const { socket, child } = await startHelper(runtime);
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'latin1'))![1]) / 1024;
    const before = rss();
    // 24 connections, 8 MiB each of one line that never ends (before: each buffered up to 256 MiB)
    const junk = Buffer.alloc(8 << 20, 0x41);
    const closed = await Promise.all(
      Array.from({ length: 24 }, () => new Promise<boolean>((resolve) => {
        const c = createConnection(socket, () => c.write(junk, () => {}));
        c.on('error', () => {});
        c.on('close', () => resolve(true));
        setTimeout(() => {
          c.destroy();
          resolve(false);
        }, 10_000);
      })),
    );
    expect(closed.every(Boolean)).toBe(true); // each dropped by the helper, not by us
    expect(rss() - before).toBeLessThan(64);
    // silent ones: 16 are given their few seconds, the rest are closed at once
    const silent = Array.from({ length: 40 }, () => {
      const c = createConnection(socket);
      c.on('error', () => {});
      return new Promise<number>((resolve) => {
        const t = Date.now();
        c.on('close', () => resolve(Date.now() - t));
      });
    });
    const waited = await Promise.all(silent);
    expect(waited.filter((ms) => ms < 2000).length).toBeGreaterThanOrEqual(24);
    expect(Math.max(...waited)).toBeLessThan(10_000);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
  }, 120_000);

  // `aalis exec -- echo hi > /dev/full` ended in a stack trace (ENOSPC thrown from the stream's
  // error event), through the helper and in its own process alike
  it('says output it could not write (a full disk) and exits 1, not 0; a reader gone (EPIPE) still leaves the status alone', async () => {
    const runtime = runtimeDir();
    await startHelper(runtime);
    const full = openSync('/dev/full', 'w');
    try {
      for (const helper of ['on', 'off']) {
        for (const [script, status] of [['echo hi', 1], ['echo hi; exit 3', 3]] as const) {
          const r = spawnSync(process.execPath, [runner, 'exec', '--network', 'off', '--', 'sh', '-c', script], { cwd: workspace, env: baseEnv(runtime, { AALIS_EXEC_HELPER: helper }), stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 60_000 });
          expect({ helper, script, status: r.status }).toEqual({ helper, script, status });
          expect(r.stderr).toContain('output could not be written to stdout (ENOSPC');
          expect(r.stderr).not.toMatch(/\n\s+at /);
        }
      }
      // nothing written, nothing lost: /dev/full refuses even an empty write, which was said as a loss
      for (const helper of ['on', 'off']) {
        const r = spawnSync(process.execPath, [runner, 'exec', '--network', 'off', '--', 'true'], { cwd: workspace, env: baseEnv(runtime, { AALIS_EXEC_HELPER: helper }), stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 60_000 });
        expect({ helper, status: r.status, stderr: r.stderr }).toEqual({ helper, status: 0, stderr: expect.not.stringContaining('could not be written') });
      }
    } finally {
      closeSync(full);
    }
    // A file that stops growing partway (a disk filling up; here RLIMIT_FSIZE): node's stream for a
    // file ignored the short write, and the rest was lost with exit 0 (found by a review)
    const partial = join(root, 'partial.txt');
    for (const helper of ['on', 'off']) {
      rmSync(partial, { force: true });
      const r = spawnSync('sh', ['-c', `trap '' XFSZ; ulimit -f 64; exec "${process.execPath}" "${runner}" exec --network off -- seq 1 100000 > "${partial}"`], { cwd: workspace, env: baseEnv(runtime, { AALIS_EXEC_HELPER: helper }), encoding: 'utf8', timeout: 60_000 });
      expect({ helper, status: r.status }).toEqual({ helper, status: 1 });
      expect(r.stderr).toContain('output could not be written to stdout (EFBIG');
      expect(statSync(partial).size).toBeLessThan(588_895);
    }
    // stderr that cannot be written (its notes lost) changes nothing the caller reads
    const noStderr = openSync('/dev/full', 'w');
    try {
      for (const helper of ['on', 'off']) {
        const r = spawnSync(process.execPath, [runner, 'exec', '--network', 'off', '--', 'sh', '-c', 'echo hi; echo note >&2'], { cwd: workspace, env: baseEnv(runtime, { AALIS_EXEC_HELPER: helper }), stdio: ['ignore', 'pipe', noStderr], encoding: 'utf8', timeout: 60_000 });
        expect({ helper, status: r.status, stdout: r.stdout }).toEqual({ helper, status: 0, stdout: 'hi\n' });
      }
    } finally {
      closeSync(noStderr);
    }
    const piped = spawnSync('sh', ['-c', `"${process.execPath}" "${runner}" exec --network off -- seq 1 100000 | head -1`], { cwd: workspace, env: baseEnv(runtime), encoding: 'utf8', timeout: 60_000 });
    expect(piped.stdout).toBe('1\n');
    expect(piped.stderr).not.toContain('could not be written');
  }, 120_000);

  it('takes over from a helper that died (its socket left behind), and ends when idle', async () => {
    const runtime = runtimeDir();
    const { socket, child } = await startHelper(runtime);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    expect(lstatSync(socket).isSocket()).toBe(true);
    expect(drive(runtime, ['--', 'true']).result).toEqual({ fallback: 'absent' });
    const next = await startHelper(runtime, { AALIS_EXEC_HELPER_IDLE: '1' });
    expect(drive(runtime, ['--', 'true']).result).toEqual({ status: 0 });
    const code = await new Promise<number | null>((r) => next.child.on('exit', r));
    expect(code).toBe(0);
    expect(existsSync(socket)).toBe(false);
    expect(existsSync(socket.replace(/\.sock$/, '.pid'))).toBe(false);
  }, 120_000);
});
