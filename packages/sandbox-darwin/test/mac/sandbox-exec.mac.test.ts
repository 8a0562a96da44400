// Real Seatbelt: runs only on macOS (`pnpm --filter @aalis/sandbox-darwin test:mac`). Every test
// starts a real sandboxed process and checks what the kernel let it do against what the policy
// says, with the same hostile-path corpus the Linux unit tests use. NOT run on the Linux machines
// this package was written on; there it is skipped, and test:mac refuses to pretend.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDarwinSandbox } from '../../src/darwin-sandbox.js';
import { policyAllowsRead, policyAllowsWrite } from '../../src/policy-verdict.js';
import hostile from '../fixtures/hostile-paths.json' with { type: 'json' };

const onMac = process.platform === 'darwin';

describe.runIf(process.env.AALIS_TEST_MAC === '1' && !onMac)('test:mac off macOS', () => {
  it('refuses to report success where nothing was verified', () => {
    expect.fail(`test:mac runs real sandbox-exec and needs macOS; this is ${process.platform}. Nothing was verified.`);
  });
});

const ENV = { PATH: '/usr/bin:/bin:/usr/sbin:/sbin', HOME: '/nonexistent', LANG: 'en_US.UTF-8' };
const empty: SandboxPolicy = {
  readDeny: [],
  readAllowWithin: [],
  write: [],
  writeDeny: [],
  writeExceptions: [],
  controlDeny: [],
  network: 'off',
  localPorts: [],
  unixSockets: [],
};

describe.runIf(onMac)('sandbox-exec on this Mac', () => {
  const service = createDarwinSandbox();
  let base = '';
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-mac-')));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const sh = (script: string, policy: SandboxPolicy, args: string[] = [], cwd = base) =>
    service.run({ argv: ['/bin/sh', '-c', script, 'sh', ...args], cwd, env: ENV, timeoutMs: 20_000, policy });

  it('probes available, with a real refusal', async () => {
    const probe = await service.probe();
    expect(probe.checks.filter((check) => !check.ok)).toEqual([]);
    expect(probe.available).toBe(true);
  });

  it('runs with exactly the request env', async () => {
    const result = await service.run({ argv: ['/usr/bin/env'], cwd: base, env: { ONLY: 'this', PATH: '/usr/bin:/bin' }, timeoutMs: 10_000, policy: empty });
    expect(result.stdout.split('\n').filter(Boolean).sort()).toEqual(['ONLY=this', 'PATH=/usr/bin:/bin']);
  });

  it.each(hostile.accepted.map((entry) => [entry.name, entry.tail]))('hostile path %s: writes inside, nothing outside', async (_name, tail) => {
    const dir = join(base, 'hostile', tail);
    mkdirSync(join(dir, '.git'), { recursive: true });
    mkdirSync(join(dir, 'secret'), { recursive: true });
    writeFileSync(join(dir, 'secret', 's'), 'top secret');
    const outside = join(base, `outside-${Buffer.from(tail).toString('hex').slice(0, 24)}`);
    const policy: SandboxPolicy = { ...empty, write: [dir], writeDeny: [{ path: join(dir, '.git') }], readDeny: [{ path: join(dir, 'secret') }] };
    const result = await sh('echo ok > "$1/inside"; echo no > "$1/.git/x"; echo no > "$2"; cat "$1/secret/s"; exit 0', policy, [dir, outside]);
    expect(readFileSync(join(dir, 'inside'), 'utf8')).toBe('ok\n');
    expect(existsSync(join(dir, '.git', 'x'))).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(result.stdout).not.toContain('top secret');
    expect(result.stderr).toMatch(/Operation not permitted/);
    // Detection reads the shell's own messages; a name with quotes, colons or line breaks garbles them.
    if (!/[\n\r'":]/.test(tail)) expect([...result.deniedWrites].sort()).toEqual([join(dir, '.git', 'x'), outside].sort());
  });

  it('the kernel decides every layer as the policy says', async () => {
    const root = join(base, 'layers');
    for (const sub of ['.git/info', 'control/ok', 'tmp', 'node_modules/x']) mkdirSync(join(root, sub), { recursive: true });
    for (const file of ['.env', 'control/ok/r', 'tmp/.env', 'plain']) writeFileSync(join(root, file), 'data');
    const policy: SandboxPolicy = {
      ...empty,
      readDeny: [{ pattern: '^.*/\\.env$' }],
      readAllowWithin: [join(root, 'tmp')],
      write: [root],
      writeDeny: [{ path: join(root, '.git') }, { path: join(root, 'node_modules') }],
      writeExceptions: [{ pattern: `^${root.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/node_modules(?:/.*)?$` }, { path: join(root, '.git', 'info') }],
      controlDeny: [{ path: join(root, 'control'), except: [{ path: join(root, 'control', 'ok') }] }],
    };
    const writes = ['plain-new', '.git/config', '.git/info/exclude', 'node_modules/x/y', 'control/c', 'control/ok/w', '.GIT/upper', 'tmp/t'].map((p) => join(root, p));
    const reads = ['.env', 'tmp/.env', 'plain', 'control/ok/r'].map((p) => join(root, p));
    const script = [
      ...writes.map((_p, i) => `(echo w > "\${${i + 1}}") 2>/dev/null && echo "W${i}"`),
      ...reads.map((_p, i) => `cat "\${${writes.length + i + 1}}" > /dev/null 2>&1 && echo "R${i}"`),
      'exit 0',
    ].join('\n');
    const result = await sh(script, policy, [...writes, ...reads]);
    const said = new Set(result.stdout.split('\n'));
    for (const [i, path] of writes.entries()) expect(said.has(`W${i}`), `write ${path}`).toBe(policyAllowsWrite(policy, path));
    for (const [i, path] of reads.entries()) expect(said.has(`R${i}`), `read ${path}`).toBe(policyAllowsRead(policy, path));
    expect(said.has('W6')).toBe(false); // .GIT: the deny holds without regard to case
  });

  it('spells /tmp the way the kernel does', async () => {
    const dir = mkdtempSync('/tmp/aalis-mac-tmp-');
    try {
      await sh('echo ok > "$1/f"', { ...empty, write: [dir] }, [dir]);
      expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('ok\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('network', () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((socket) => socket.end('hi\n'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const connect = (policy: SandboxPolicy) => sh(`/usr/bin/nc -z -w 3 127.0.0.1 ${port}`, policy);

    it('off refuses IP', async () => expect((await connect(empty)).exitCode).not.toBe(0));
    it('on connects', async () => expect((await connect({ ...empty, network: 'on' })).exitCode).toBe(0));
    it('on minus localPorts refuses that port', async () => expect((await connect({ ...empty, network: 'on', localPorts: [port] })).exitCode).not.toBe(0));

    it('unix sockets only under unixSockets', async () => {
      const allowed = join(base, 'sock-ok');
      const other = join(base, 'sock-no');
      mkdirSync(allowed);
      mkdirSync(other);
      const servers = await Promise.all(
        [join(allowed, 's'), join(other, 's')].map(async (path) => {
          const s = createServer((socket) => socket.end('hi\n'));
          await new Promise<void>((resolve) => s.listen(path, resolve));
          return s;
        }),
      );
      try {
        const policy: SandboxPolicy = { ...empty, unixSockets: [allowed] };
        expect((await sh('/usr/bin/nc -U "$1" < /dev/null', policy, [join(allowed, 's')])).stdout).toBe('hi\n');
        expect((await sh('/usr/bin/nc -U "$1" < /dev/null', policy, [join(other, 's')])).stdout).toBe('');
      } finally {
        await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      }
    });
  });

  it('the timeout kills the sandboxed tree', async () => {
    const started = Date.now();
    const result = await service.run({ argv: ['/bin/sh', '-c', 'sleep 60 & sleep 60'], cwd: base, env: ENV, timeoutMs: 500, policy: empty });
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
