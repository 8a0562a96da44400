import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/** Root can make a runtime directory under /run and a network namespace with `unshare -n`. */
function runWritable(): boolean {
  try {
    accessSync('/run', constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
const isRoot = process.getuid?.() === 0;

/**
 * A host daemon in Python: binds a unix socket at argv[2] after chdir to argv[1] (so a relative
 * name stays relative in /proc/net/unix), renames it to argv[3] if given, prints `ready`, and
 * answers `hello` to every connection.
 */
const SERVER = `
import os, socket, sys
os.chdir(sys.argv[1])
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[2]); s.listen(8)
if len(sys.argv) > 3 and sys.argv[3]:
    os.rename(sys.argv[2], sys.argv[3])
print('ready', flush=True)
while True:
    c, _ = s.accept(); c.sendall(b'hello\\n'); c.close()
`;
import { TEST_SCRATCH } from '../../../test/scratch.js';

// the look model: a test here signals through a file the command writes while it runs, which the overlay keeps off the host until the end
const sb = createLinuxSandbox({ hostModel: 'look' });
const daemons: ChildProcess[] = [];
let s: Scene;
let runDir = '';

/** Starts the Python daemon (optionally wrapped, e.g. in `unshare -n`) and waits until it listens. */
function daemon(cwd: string, name: string, renameTo = '', wrap: string[] = []): Promise<void> {
  const p = spawn(wrap[0] ?? 'python3', [...wrap.slice(1), ...(wrap.length ? ['python3'] : []), '-c', SERVER, cwd, name, renameTo], { stdio: ['ignore', 'pipe', 'inherit'] });
  daemons.push(p);
  return new Promise((resolve, reject) => {
    p.stdout!.once('data', () => resolve());
    p.once('exit', (code) => reject(new Error(`daemon exited ${code}`)));
  });
}

const CONNECT = `import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print(s.recv(10).decode().strip())
    except Exception as e:
        print(type(e).__name__)`;
const connect = (...paths: string[]): [string, ...string[]] => ['python3', '-c', CONNECT, ...paths];
/** What a connect from the host itself gets: the control that the socket is really there and answering. */
async function fromHost(...paths: string[]): Promise<string[]> {
  const [cmd, ...args] = connect(...paths);
  const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout!.on('data', (d) => {
    out += d;
  });
  await new Promise((r) => p.once('exit', r));
  return out.trim().split('\n');
}
const refused = (out: string) => out.trim().split('\n').every((l) => l === 'FileNotFoundError' || l === 'ConnectionRefusedError' || l === 'PermissionError');

beforeAll(() => {
  s = makeScene();
});
afterAll(() => {
  for (const d of daemons) d.kill('SIGKILL');
  s.cleanup();
  if (runDir) rmSync(runDir, { recursive: true, force: true });
});

describe('host unix sockets, found by what they are', { timeout: 60_000 }, () => {
  // A root daemon's command runs mapped off uid 0 (root-map.ts): another user's private directory is
  // closed to it, and so to bwrap, which could not make the mount point hiding a socket in it and
  // refused every run ("Can't mkdir parents for …: Permission denied") while such a socket listened
  // (seen in CI: a test's listener in a nobody-owned scene). It cannot reach that socket anyway.
  it.skipIf(!isRoot)("a socket in another user's private directory: the run goes on, and the command cannot reach it", async () => {
    const priv = mkdtempSync(join(TEST_SCRATCH, 'aalis-private-'));
    chownSync(priv, 65534, 65534);
    chmodSync(priv, 0o700);
    const ws = join(priv, 'ws');
    mkdirSync(ws, { mode: 0o755 });
    chownSync(ws, 65534, 65534);
    try {
      await daemon(ws, 'priv.sock');
      const sock = join(ws, 'priv.sock');
      expect(await fromHost(sock)).toEqual(['hello']);
      // the default host model (overlays), as a daemon runs it
      const box = createLinuxSandbox({});
      try {
        const r = await box.run(req(s, connect(sock)));
        expect(r.stdout).toBe('PermissionError\n');
        expect(r.exitCode).toBe(0);
      } finally {
        await box.close();
      }
    } finally {
      daemons.pop()?.kill('SIGKILL'); // its socket must not outlive the test: the next ones count what the host lists
      await new Promise((r) => setTimeout(r, 200));
      rmSync(priv, { recursive: true, force: true });
    }
  });

  it.skipIf(!runWritable())('the socket home /run is hidden whole: a socket there refuses, one bound there after the scan too; name resolution and /run symlinks still work', async () => {
    runDir = mkdtempSync('/run/aalis-test-');
    await daemon(runDir, 'before.sock');
    writeFileSync(join(runDir, 'daemon.pid'), '1\n');
    const plan = sb.translate(req(s, ['true']).policy, s.ws);
    expect(plan.mounts.filter((m) => m.path.startsWith('/run'))).toContainEqual({ path: '/run', state: 'hidden', kind: 'dir', why: 'socket-home' });
    const later = join(runDir, 'later.sock');
    const go = join(s.ws, 'go');
    // the command waits until the host has bound a new socket, then connects to both
    const run = sb.run(req(s, ['sh', '-c', `touch started; while [ ! -e ${go} ]; do sleep 0.05; done; exec "$@"`, 'sh', ...connect(join(runDir, 'before.sock'), later)]));
    while (!existsSync(join(s.ws, 'started'))) await new Promise((r) => setTimeout(r, 50));
    await daemon(runDir, 'later.sock');
    writeFileSync(go, '');
    const r = await run;
    expect(await fromHost(join(runDir, 'before.sock'), later)).toEqual(['hello', 'hello']);
    expect(r.stdout).toBe('FileNotFoundError\nFileNotFoundError\n');
    expect((await sb.run(req(s, ['ls', '-A', runDir]))).stdout).toBe('');
    expect((await sb.run(req(s, ['cat', '/etc/resolv.conf']))).stdout).toBe(readFileSync('/etc/resolv.conf', 'utf8'));
    if (existsSync('/run/shm')) expect((await sb.run(req(s, ['readlink', '/run/shm']))).stdout.trim()).toBe(readlinkSync('/run/shm'));
    // under unixSockets it answers: the refusal above is the hiding
    const allowed = await sb.run(req(s, connect(join(runDir, 'before.sock')), { policy: { ...req(s, ['true']).policy, unixSockets: [runDir] } }));
    expect(allowed.stdout).toBe('hello\n');
  });

  it('a socket elsewhere is hidden at its name; one renamed after bind has its directory hidden; one bound by a relative name is found through its holder', async () => {
    const named = join(s.root, 'sock-named');
    const renamed = join(s.root, 'sock-renamed');
    const relative = join(s.root, 'sock-relative');
    for (const d of [named, relative, renamed]) mkdirSync(d);
    writeFileSync(join(renamed, 'other-file'), 'x\n');
    await daemon(named, join(named, 'a.sock'));
    await daemon(renamed, join(renamed, 'tmp.sock'), join(renamed, 'final.sock'));
    await daemon(relative, 'rel.sock');
    const paths = [join(named, 'a.sock'), join(renamed, 'final.sock'), join(relative, 'rel.sock')];
    expect(await fromHost(...paths)).toEqual(['hello', 'hello', 'hello']);
    const r = await sb.run(req(s, connect(...paths)));
    expect(refused(r.stdout), r.stdout).toBe(true);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(3);
    const ls = await sb.run(req(s, ['ls', '-A', renamed]));
    expect(ls.stdout).toBe(''); // the directory of the renamed socket is hidden whole
    expect(r.stderr).not.toMatch(/could not be located/);
  });

  it('a socket whose name is not UTF-8 has its directory hidden', async () => {
    const dir = join(s.root, 'sock-bytes');
    mkdirSync(dir);
    const name = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0xff, 0x61]), Buffer.from('.sock')]);
    // the name's bytes as they are (argv would be UTF-8): handed over in hex
    const code = SERVER.replace('s.bind(sys.argv[2])', 's.bind(bytes.fromhex(sys.argv[2]))');
    const p = spawn('python3', ['-c', code, dir, name.toString('hex')], { stdio: ['ignore', 'pipe', 'inherit'] });
    daemons.push(p);
    await new Promise((resolve) => p.stdout!.once('data', resolve));
    writeFileSync(join(dir, 'beside'), 'x\n');
    expect(readFileSync('/proc/self/net/unix').includes(name)).toBe(true);
    const r = await sb.run(req(s, ['ls', '-A', dir]));
    expect(r.stdout).toBe('');
  });

  it.skipIf(!isRoot)('a socket bound in another network namespace (unshare -n) is hidden too', async () => {
    const dir = join(s.root, 'sock-netns');
    mkdirSync(dir);
    await daemon(dir, join(dir, 'ns.sock'), '', ['unshare', '-n']);
    expect(readFileSync('/proc/self/net/unix', 'utf8')).not.toContain(join(dir, 'ns.sock')); // not in our namespace's list
    expect(await fromHost(join(dir, 'ns.sock'))).toEqual(['hello']); // but reachable by path
    const r = await sb.run(req(s, connect(join(dir, 'ns.sock'))));
    expect(refused(r.stdout), r.stdout).toBe(true);
  });
});
