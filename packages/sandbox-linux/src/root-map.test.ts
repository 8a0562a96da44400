import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseRootRange, type IdFiles, planRootMap, ROOT_MAP_COUNT, ROOT_MAP_FIRST } from './root-map.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const isRoot = process.getuid?.() === 0;
const RATELIMIT = '/proc/sys/kernel/printk_ratelimit';
const none: IdFiles = { passwd: '', group: '', subuid: '', subgid: '' };
const second = ROOT_MAP_FIRST + ROOT_MAP_COUNT;

describe('the root map range', () => {
  it.each<[string, Partial<IdFiles>, number | undefined]>([
    ['nothing taken: the first candidate', {}, ROOT_MAP_FIRST],
    ['an account inside the first candidate', { passwd: `x:x:${ROOT_MAP_FIRST + 5}:100::/:/bin/sh` }, second],
    ['a group id at its last id', { group: `g:x:${second - 1}:` }, second],
    ['a sub-id range reaching into it', { subuid: `u:${ROOT_MAP_FIRST - 10}:20` }, second],
    ['a sub-gid range right after it', { subgid: `u:${second}:10` }, ROOT_MAP_FIRST],
    ['every candidate under one sub-id range', { subuid: `u:${ROOT_MAP_FIRST}:${256 * ROOT_MAP_COUNT}` }, undefined],
  ])('%s', (_, files, base) => {
    expect(chooseRootRange({ ...none, ...files })?.base).toBe(base);
  });

  it('meets no account or sub-id range of this host', () => {
    const r = chooseRootRange();
    expect(r).toBeDefined();
    for (const f of ['/etc/passwd', '/etc/group']) {
      for (const line of (existsSync(f) ? readFileSync(f, 'utf8') : '').split('\n')) {
        const id = Number(line.split(':')[2]);
        expect(id >= r!.base && id < r!.base + r!.count).toBe(false);
      }
    }
  });
});

/** The host pid, uid and user namespace map of the process whose argv is exactly `argv`, waited for. */
async function findOnHost(argv: string[]): Promise<{ pid: number; uid: number; uidMap: string }> {
  const want = `${argv.join('\0')}\0`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const n of readdirSync('/proc')) {
      if (!/^\d+$/.test(n)) continue;
      try {
        if (readFileSync(`/proc/${n}/cmdline`, 'utf8') !== want) continue;
        const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${n}/status`, 'utf8'))![1]);
        return { pid: Number(n), uid, uidMap: readFileSync(`/proc/${n}/uid_map`, 'utf8') };
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no process ${argv.join(' ')} on the host`);
}

describe.skipIf(!isRoot)('a root daemon\'s command off the host\'s uid 0', { timeout: 90_000 }, () => {
  const range = planRootMap();
  const base = range.ok ? range.range.base : -1;
  const sb = createLinuxSandbox();
  let s: Scene;
  beforeAll(() => {
    s = makeScene();
  });
  afterAll(() => s?.cleanup());

  it.each(['overlay', 'look'] as const)('is uid 0 inside and the mapped uid on the host (%s model)', async (hostModel) => {
    const box = createLinuxSandbox({ hostModel });
    // a long sleep, ended once seen (a 2 s one could end before a loaded machine's test looked)
    const sleep = ['sleep', `600.${hostModel.length}17`];
    const run = box.run(req(s, ['sh', '-c', `id -u; id -g; ${sleep.join(' ')} || true`]));
    const seen = await findOnHost(sleep);
    process.kill(seen.pid, 'SIGKILL');
    const r = await run;
    expect(r.stdout).toBe('0\n0\n');
    expect(seen.uid).toBe(base);
    // the namespace's map as the host reads it: inside 0, outside the unprivileged range
    expect(seen.uidMap.trim().split(/\s+/)).toEqual(['0', String(base), '1']);
    expect(base).toBeGreaterThanOrEqual(ROOT_MAP_FIRST);
  });

  it('a host socket\'s peer sees the mapped uid, not root', async () => {
    const sock = join(s.ws, 'peer.sock');
    const out = join(s.root, 'peer-uid');
    const server = spawn('python3', [
      '-c',
      'import socket,struct,sys\ns=socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1]); s.listen(1)\nprint("ready", flush=True)\nc,_=s.accept()\npid,uid,gid=struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))\nopen(sys.argv[2],"w").write(str(uid & 0xffffffff))',
      sock,
      out,
    ]);
    const exited = new Promise((r) => server.once('exit', r));
    await new Promise((r) => server.stdout.once('data', r));
    const r = await sb.run(req(s, ['python3', '-c', 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")', sock]));
    if (r.stdout !== 'connected\n') server.kill();
    await exited;
    expect(r).toMatchObject({ stdout: 'connected\n', stderr: '' });
    expect(readFileSync(out, 'utf8')).toBe(String(base));
  });

  it("sees root's files as its own, and what it writes lands owned as before (by root)", async () => {
    chownSync(join(s.ws, 'src', 'a.txt'), 1234, 1234);
    const r = await sb.run(req(s, ['sh', '-c', 'stat -c %u:%g /etc/passwd src src/a.txt; echo x > made.txt; mkdir -p made/d; echo y > made/d/f']));
    // bwrap 0.8 maps only its own id in the namespace it nests: another owner shows as the overflow id, as before the map
    expect(r.stdout).toBe('0:0\n0:0\n65534:65534\n');
    for (const p of ['made.txt', 'made/d', 'made/d/f']) expect([p, statSync(join(s.ws, p)).uid, statSync(join(s.ws, p)).gid]).toEqual([p, 0, 0]);
  });

  it('a root-owned 0600 file on the deny-read list, and one of an id the map does not hold, stay unreadable', async () => {
    const dir = join(s.root, 'secrets');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'root-only'), 'ROOT SECRET\n', { mode: 0o600 });
    writeFileSync(join(s.root, 'foreign-only'), 'FOREIGN SECRET\n', { mode: 0o600 });
    chownSync(join(s.root, 'foreign-only'), 3_000_000_000, 3_000_000_000);
    const policy = { ...req(s, ['true']).policy };
    const r = await sb.run(req(s, ['sh', '-c', 'cat "$0"/secrets/root-only; cat "$0"/foreign-only; stat -c %u "$0"/foreign-only', s.root], { policy: { ...policy, readDeny: [...policy.readDeny, { path: dir }] } }));
    expect(r.stdout).not.toMatch(/SECRET/);
    expect(r.stderr).toMatch(/foreign-only: Permission denied/);
    expect(r.stdout).toBe('65534\n'); // unmapped: the overflow id
  });

  it('/proc/sys stays read-only and the host keeps its value', async () => {
    const before = readFileSync(RATELIMIT, 'utf8');
    const r = await sb.run(req(s, ['sh', '-c', `echo ${Number(before) + 1} > ${RATELIMIT}`]));
    expect(r.exitCode).not.toBe(0);
    expect(readFileSync(RATELIMIT, 'utf8')).toBe(before);
  });

  it('without python3, doctor says why and nothing runs', async () => {
    const box = createLinuxSandbox({ python: '/nonexistent/python3' });
    const check = (await box.probe()).checks.find((c) => c.name === 'host-uid');
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/python3 is not installed.*fails closed|fails closed.*python3 is not installed/), fix: expect.stringMatching(/rootUidMap: off/) });
    const err = await box.run(req(s, ['sh', '-c', 'echo ran > ran-without-python'])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailableError);
    expect((err as Error).message).toMatch(/host-uid/);
    expect(existsSync(join(s.ws, 'ran-without-python'))).toBe(false);
  });

  it('a python3 that is a script (a version manager\'s shim) is never run as root with the command\'s environment', async () => {
    const shim = join(s.root, 'python3');
    const ran = join(s.root, 'shim-ran');
    writeFileSync(shim, `#!/bin/sh\ntouch ${ran}\nexec /usr/bin/python3 "$@"\n`, { mode: 0o755 });
    const box = createLinuxSandbox({ python: shim });
    const check = (await box.probe()).checks.find((c) => c.name === 'host-uid');
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/is a script/) });
    await expect(box.run(req(s, ['true']))).rejects.toBeInstanceOf(SandboxUnavailableError);
    expect(existsSync(ran)).toBe(false);
  });

  it.each(['overlay', 'look'] as const)('a writable root whose file system refuses idmapping fails closed, naming it (%s model)', async (hostModel) => {
    const ram = join(s.root, `ram-${hostModel}`);
    mkdirSync(ram, { recursive: true });
    execFileSync('mount', ['-t', 'ramfs', 'ramfs', ram]);
    try {
      chmodSync(ram, 0o755);
      const policy = req(s, ['true']).policy;
      const box = createLinuxSandbox({ hostModel });
      const err = await box.run(req(s, ['sh', '-c', `echo ran > ${ram}/ran`], { policy: { ...policy, write: [...policy.write, ram] } })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxUnavailableError);
      expect((err as SandboxUnavailableError).message).toContain(`the file system of ${ram} cannot be idmapped`);
      expect((err as SandboxUnavailableError).message).toMatch(/mount_setattr.*errno/);
      expect(readdirSync(ram)).toEqual([]);
    } finally {
      execFileSync('umount', [ram]);
    }
  });

  it('rootUidMap off runs as the host\'s uid 0, and doctor says so', async () => {
    const box = createLinuxSandbox({ rootUidMap: 'off' });
    const check = (await box.probe()).checks.find((c) => c.name === 'host-uid');
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/rootUidMap is off.*host's uid 0/) });
    const sleep = ['sleep', '600.3141'];
    const run = box.run(req(s, ['sh', '-c', `${sleep.join(' ')} || true`]));
    const seen = await findOnHost(sleep);
    process.kill(seen.pid, 'SIGKILL');
    expect(seen.uid).toBe(0);
    expect((await run).exitCode).toBe(0);
  });
});
