// The escape corpus (test/fixtures/escapes.json, the macOS form of sandbox-linux's) run for real
// under sandbox-exec. Runs only on macOS; NOT run on the Linux machines this package was written on.
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { protectedLists, type SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDarwinSandbox } from '../../src/darwin-sandbox.js';
import corpus from '../fixtures/escapes.json' with { type: 'json' };

type Attempt = { id: string; run: string; network?: string; outside?: string[] };
const SECRETS = ['SECRET-SSH-KEY', 'SECRET-DOTENV', 'SECRET-CONTROL'];

/** Every file, directory and link under `dir`, with mode and content, except `{ws}/x-*`. */
function snapshot(dir: string, skip: (path: string) => boolean, out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (skip(path)) continue;
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) out.set(path, `link ${readlinkSync(path)}`);
    else if (stat.isDirectory()) {
      out.set(path, `dir ${stat.mode.toString(8)}`);
      snapshot(path, skip, out);
    } else out.set(path, `file ${stat.mode.toString(8)} ${readFileSync(path, 'utf8')}`);
  }
  return out;
}

function scene() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-escape-')));
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  const data = join(root, 'data');
  const control = join(data, 'plugins');
  for (const dir of [join(ws, 'src'), join(ws, '.git', 'hooks'), join(home, '.ssh'), control, join(data, 'tmp', 's1'), join(data, 'workspace'), join(data, 'self')]) {
    mkdirSync(dir, { recursive: true });
  }
  writeFileSync(join(ws, '.git', 'config'), '[core]\n');
  writeFileSync(join(ws, '.env'), 'SECRET-DOTENV\n');
  writeFileSync(join(ws, 'src', 'main.ts'), 'export {};\n');
  writeFileSync(join(home, '.bashrc'), '# rc\n');
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'SECRET-SSH-KEY\n');
  chmodSync(join(home, '.ssh', 'id_ed25519'), 0o600);
  writeFileSync(join(control, 'state.json'), '{"SECRET-CONTROL":1}\n');
  const lists = protectedLists({
    paths: { install: join(root, 'install'), data, workspace: join(data, 'workspace'), tmp: join(data, 'tmp'), self: join(data, 'self'), logs: join(data, 'logs'), config: join(data, 'config.yaml'), secrets: join(data, 'secrets.yaml') },
    userHome: home,
    platform: 'darwin',
    form: 'npm',
    codeDirs: [],
  });
  return { root, ws, home, control, sessionTmp: join(data, 'tmp', 's1'), lists };
}

describe.runIf(process.platform === 'darwin')('the escape corpus under real sandbox-exec', () => {
  const service = createDarwinSandbox();
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((socket) => socket.end('DAEMON-PORT-REACHED\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    process.env.AALIS_LEAK_CANARY = 'must-not-leak';
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each((corpus.attempts as Attempt[]).map((attempt) => [attempt.id, attempt]))('%s', async (_id, attempt) => {
    const s = scene();
    try {
      const fill = (text: string) =>
        text.replaceAll('{ws}', s.ws).replaceAll('{home}', s.home).replaceAll('{root}', s.root).replaceAll('{control}', s.control).replaceAll('{port}', String(port)).replaceAll('{ppid}', String(process.pid));
      const policy: SandboxPolicy = {
        readDeny: s.lists.denyRead,
        readAllowWithin: [s.sessionTmp],
        write: [s.ws, s.sessionTmp],
        writeDeny: s.lists.landing,
        writeExceptions: [],
        controlDeny: s.lists.control,
        network: attempt.network === 'on' ? 'on' : 'off',
        localPorts: [port],
        unixSockets: [s.ws, s.sessionTmp],
      };
      const isScratch = (path: string) => path.startsWith(join(s.ws, 'x-'));
      const before = snapshot(s.root, isScratch);
      const result = await service.run({
        argv: ['/bin/sh', '-c', fill(attempt.run)],
        cwd: s.ws,
        env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin', HOME: s.home, LANG: 'en_US.UTF-8' },
        timeoutMs: 20_000,
        policy,
      });
      const output = result.stdout + result.stderr;
      expect(snapshot(s.root, isScratch)).toEqual(before);
      for (const secret of SECRETS) expect(output, `printed ${secret}`).not.toContain(secret);
      expect(output).not.toContain('DAEMON-PORT-REACHED');
      expect(output).not.toContain('must-not-leak');
      for (const path of attempt.outside ?? []) expect(existsSync(fill(path)), `created ${fill(path)}`).toBe(false);
    } finally {
      for (const path of attempt.outside ?? []) rmSync(path.replaceAll('{root}', s.root), { force: true });
      rmSync(s.root, { recursive: true, force: true });
    }
  });
});
