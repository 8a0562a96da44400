// Issue 20 under real sandbox-exec: each hole and false denial that src/seatbelt-decisions.test.ts
// decides on the profile text, run on a Mac (`pnpm --filter @aalis/sandbox-darwin test:mac`).
// Runs only on macOS. NOT executed in the session that wrote it (Linux, no Seatbelt): every
// expectation here is a claim until someone runs it on a Mac and says so in the README.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDarwinSandbox } from '../../src/darwin-sandbox.js';
import { findUserDirs } from '../../src/user-dirs.js';

const onMac = process.platform === 'darwin';
const ENV = { PATH: '/usr/bin:/bin:/usr/sbin:/sbin', HOME: '/nonexistent', LANG: 'en_US.UTF-8' };
const NODE = process.execPath;

function works(file: string, args: string[]): boolean {
  try {
    execFileSync(file, args, { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

describe.runIf(onMac)('issue 20 under real sandbox-exec', () => {
  const service = createDarwinSandbox();
  let base = '';
  let ws = '';
  let caches = '';
  let policy: SandboxPolicy;
  beforeAll(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-issue20-')));
    ws = join(base, 'ws');
    caches = join(base, 'home', 'Library', 'Caches');
    for (const dir of [join(ws, '.git', 'hooks'), join(ws, 'config', 'secrets'), caches, join(base, 'tmp')]) mkdirSync(dir, { recursive: true });
    // A workspace-like policy: the project and a ~/Library/Caches root (so the per-user folders are granted).
    policy = {
      readDeny: [{ pattern: '^.*/\\.env[^/]*$' }, { path: join(ws, 'config', 'secrets') }],
      readAllowWithin: [join(base, 'tmp')],
      write: [ws, caches, join(base, 'tmp')],
      writeDeny: [{ pattern: '^.*/\\.git/hooks(?:/.*)?$' }],
      writeExceptions: [],
      controlDeny: [],
      network: 'on',
      localPorts: [],
      unixSockets: [],
    };
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const sh = (script: string, p: SandboxPolicy, args: string[] = []) => service.run({ argv: ['/bin/sh', '-c', script, 'sh', ...args], cwd: ws, env: ENV, timeoutMs: 30_000, policy: p });
  const node = (code: string, p: SandboxPolicy, args: string[] = []) => service.run({ argv: [NODE, '-e', code, ...args], cwd: ws, env: ENV, timeoutMs: 30_000, policy: p });

  describe('holes', () => {
    it('mv, ln and cp -c cannot carry .env to a readable name; a folder above a denied path cannot be renamed', async () => {
      writeFileSync(join(ws, '.env'), 'SECRET-DOTENV\n');
      writeFileSync(join(ws, 'config', 'secrets', 'key'), 'SECRET-KEY\n');
      const result = await sh(
        'mv .env x-moved; ln .env x-linked; cp -c .env x-cloned; mv config x-config; cat x-moved x-linked x-cloned x-config/secrets/key; exit 0',
        policy,
      );
      expect(result.stdout).not.toMatch(/SECRET/);
      expect(readFileSync(join(ws, '.env'), 'utf8')).toBe('SECRET-DOTENV\n');
      for (const name of ['x-moved', 'x-linked', 'x-cloned', 'x-config']) expect(existsSync(join(ws, name)), name).toBe(false);
      expect(result.deniedWrites).toEqual(expect.arrayContaining([join(ws, '.env'), join(ws, 'config')]));
      // An ordinary file still moves: the deny is about the denied names only.
      writeFileSync(join(ws, 'plain'), 'p');
      expect((await sh('mv plain x-plain && ln x-plain x-plain2 && echo ok', policy)).stdout).toBe('ok\n');
    });

    it('no set-user-id or set-group-id bit on a file the command leaves behind; chmod 755 works', async () => {
      const result = await sh('cp /bin/sh rootsh && chmod 755 rootsh && echo plain; chmod u+s rootsh && echo SUID; chmod g+s rootsh && echo SGID; exit 0', policy);
      expect(result.stdout).toBe('plain\n');
      expect(execFileSync('stat', ['-f', '%p', join(ws, 'rootsh')], { encoding: 'utf8' }).trim()).toMatch(/0755$/);
    });

    it('a writable root cannot be moved into another root; what is inside it can', async () => {
      mkdirSync(join(ws, 'sub'), { recursive: true });
      const result = await sh('mv "$1" "$2/moved-root" && echo ROOT; mv "$1/sub" "$2/moved-sub" && echo SUB; exit 0', policy, [ws, caches]);
      expect(result.stdout).toBe('SUB\n');
      expect(existsSync(ws)).toBe(true);
    });

    it('localPorts are refused on every spelling of the host, and for binding', async () => {
      const server: Server = createServer((socket) => socket.end('DAEMON-PORT-REACHED\n'));
      await new Promise<void>((resolve) => server.listen(0, '::', resolve));
      const port = (server.address() as { port: number }).port;
      try {
        const lan = Object.values(networkInterfaces())
          .flat()
          .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
        const hosts = ['127.0.0.1', '::1', '::ffff:127.0.0.1', ...(lan === undefined ? [] : [lan])];
        const connect = `const [h,p]=process.argv.slice(1);const s=require('net').connect({host:h,port:+p});s.on('data',d=>process.stdout.write(d));s.on('error',e=>{console.log(e.code);process.exit(3)})`;
        for (const host of hosts) {
          const result = await node(connect, { ...policy, localPorts: [port] }, [host, String(port)]);
          expect(result.stdout, host).not.toContain('DAEMON-PORT-REACHED');
          // Control: the same connection without the port in localPorts gets through.
          expect((await node(connect, policy, [host, String(port)])).stdout, `${host} control`).toContain('DAEMON-PORT-REACHED');
        }
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      const free = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const p = (probe.address() as { port: number }).port;
          probe.close(() => resolve(p));
        });
      });
      const bind = `require('net').createServer().on('error',e=>{console.log(e.code);process.exit(3)}).listen(+process.argv[1],'127.0.0.1',()=>{console.log('bound');process.exit(0)})`;
      expect((await node(bind, { ...policy, localPorts: [free] }, [String(free)])).stdout).toBe('EPERM\n');
    });

    it("another process's arguments and environment stay unreadable (kern.procargs2); hw.ncpu reads", async () => {
      process.env.AALIS_ISSUE20_CANARY = 'must-not-leak';
      const result = await sh(`ps -E -ww -o command= -p ${process.pid}; sysctl -n hw.ncpu`, policy);
      expect(result.stdout).not.toContain('must-not-leak');
      expect(result.stdout).toMatch(/^\d+$/m);
    });

    it.runIf(works('/usr/bin/python3', ['-c', 'import multiprocessing.shared_memory']))("another segment of the same user is out of reach; Python's own works", async () => {
      const name = `aalis_issue20_${process.pid}`;
      const hold = `import multiprocessing.shared_memory as m,time;s=m.SharedMemory(name='${name}',create=True,size=64);s.buf[:6]=b'SECRET';time.sleep(20)`;
      const holder = execFileSync('/bin/sh', ['-c', `/usr/bin/python3 -c "${hold}" >/dev/null 2>&1 & echo $!`]).toString().trim();
      try {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const attach = `import multiprocessing.shared_memory as m;print(bytes(m.SharedMemory(name='${name}').buf[:6]))`;
        expect((await service.run({ argv: ['/usr/bin/python3', '-c', attach], cwd: ws, env: ENV, timeoutMs: 30_000, policy })).stdout).not.toContain('SECRET');
        const own = "import multiprocessing.shared_memory as m;s=m.SharedMemory(create=True,size=64);s.buf[0]=7;print(s.buf[0]);s.close();s.unlink()";
        expect((await service.run({ argv: ['/usr/bin/python3', '-c', own], cwd: ws, env: ENV, timeoutMs: 30_000, policy })).stdout).toBe('7\n');
      } finally {
        execFileSync('/bin/kill', [holder]);
      }
    });
  });

  describe('false denials', () => {
    it('the per-user temp and cache folders are writable where caches are, not in the readonly tier; /private/tmp never', async () => {
      const dirs = await findUserDirs();
      expect(dirs, 'getconf DARWIN_USER_TEMP_DIR / DARWIN_USER_CACHE_DIR').toBeDefined();
      const name = `aalis-issue20-${process.pid}`;
      const script = 'echo x > "$1" && echo T; echo x > "$2" && echo C; echo x > "/private/tmp/$3" && echo TMP; exit 0';
      const args = [join(dirs!.temp, name), join(dirs!.cache, name), name];
      try {
        expect((await sh(script, policy, args)).stdout).toBe('T\nC\n');
        const readonly: SandboxPolicy = { ...policy, write: [join(base, 'tmp')], network: 'off' };
        expect((await sh(script, readonly, args)).stdout).toBe('');
        expect(existsSync(join('/private/tmp', name))).toBe(false);
      } finally {
        for (const path of [...args.slice(0, 2), join('/private/tmp', args[2]!)]) rmSync(path, { force: true });
      }
    });

    it.runIf(works('/usr/bin/xcrun', ['--find', 'clang']))('xcrun finds clang inside the sandbox', async () => {
      expect((await sh('/usr/bin/xcrun --find clang', policy)).exitCode).toBe(0);
    });

    it('hard links and clones work inside a writable root, never onto a landing', async () => {
      writeFileSync(join(ws, 'src-file'), 'data');
      const result = await sh('ln src-file x-hard && echo LINK; cp -c src-file x-clone && echo CLONE; ln src-file .git/hooks/pre-commit && echo LANDING; exit 0', policy);
      expect(result.stdout).toBe('LINK\nCLONE\n');
      expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    });

    it('with network on a command listens on 127.0.0.1:0 and on :: and connects to itself; with network off it cannot', async () => {
      const selfTest = `const n=require('net');const s=n.createServer(c=>c.end('hi')).listen(0,process.argv[1],()=>{n.connect(s.address().port,'127.0.0.1').on('data',d=>{console.log(String(d));process.exit(0)})}).on('error',e=>{console.log(e.code);process.exit(3)})`;
      expect((await node(selfTest, policy, ['127.0.0.1'])).stdout).toBe('hi\n');
      expect((await node(selfTest, policy, ['::'])).stdout).toBe('hi\n');
      expect((await node(selfTest, { ...policy, network: 'off' }, ['127.0.0.1'])).stdout).not.toBe('hi\n');
    });

    it('preferences read through cfprefsd, and writing one is refused', async () => {
      const domain = `com.aalis.issue20.${process.pid}`;
      expect((await sh('defaults read -g AppleLocale >/dev/null && echo READ', policy)).stdout).toBe('READ\n');
      try {
        await sh(`defaults write ${domain} key value`, policy);
        expect(works('/usr/bin/defaults', ['read', domain, 'key'])).toBe(false);
      } finally {
        works('/usr/bin/defaults', ['delete', domain]);
      }
    });

    it.runIf(works('/usr/libexec/java_home', []))('the JVM starts (sysctl-write kern.grade_cputype)', async () => {
      expect((await sh('"$(/usr/libexec/java_home)/bin/java" -version', policy)).exitCode).toBe(0);
    });

    it('a pseudo-terminal opens (script uses openpty)', async () => {
      const result = await sh('/usr/bin/script -q /dev/null /bin/echo pty-ok', policy);
      expect(result.stdout).toContain('pty-ok');
    });

    it("another terminal's device stays closed", async () => {
      const result = await sh('for t in /dev/ttys00*; do (echo x > "$t") 2>/dev/null && echo "WROTE $t"; done; exit 0', policy);
      expect(result.stdout).not.toContain('WROTE');
    });
  });
});
