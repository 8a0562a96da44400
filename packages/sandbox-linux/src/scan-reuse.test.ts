import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reusedScanCount } from './scan-reuse.js';
import { findPatternMatches } from './scan.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox, type LinuxSandbox } from './service.js';

// A scan is given again only while every directory it listed is unchanged (scan-reuse.ts). Each
// case below makes the next run's scan reusable (two runs of `true`, the second reusing it), then
// changes the host between two runs and runs a command that reaches for what changed: the kernel
// must refuse it, as it would with no reuse at all.
let s: Scene;
let sandbox: LinuxSandbox;
let server: Server | undefined;

beforeAll(() => {
  s = makeScene();
  // inline, so the reuse count is this thread's; settled at once, so a scene made a moment ago is reused
  sandbox = createLinuxSandbox({ hostWalks: 'inline', scan: { home: s.home, reuseSettledMs: 0 } });
});

afterAll(async () => {
  server?.close();
  await sandbox.close();
  s.cleanup();
});

/**
 * Two runs of `true`: the second must reuse the first's walk from `root`, or the case proves nothing
 * about reuse. (Walks outside the scene, `/var/tmp` say, may run again: other programs change them.)
 */
async function primeReuse(root: string): Promise<void> {
  await sandbox.run(req(s, ['true']));
  const before = reusedScanCount(root);
  await sandbox.run(req(s, ['true']));
  expect(reusedScanCount(root)).toBe(before + 1);
}

describe('a scan reused while nothing it listed changed', () => {
  // the file, and the walk that lists its directory
  const secrets: [string, (s: Scene) => string, (s: Scene) => string][] = [
    ['a new .env in an ancestor of the workspace', (t) => `${t.root}/.env`, (t) => t.root],
    ['a new .env deep in the workspace', (t) => `${t.ws}/src/deep/.env.local`, (t) => t.ws],
    ['a new .env in the home', (t) => `${t.home}/code/.env`, (t) => t.home],
  ];
  it.each(secrets)('%s is hidden from the next run', async (_, where, walk) => {
    const path = where(s);
    mkdirSync(path.slice(0, path.lastIndexOf('/')), { recursive: true });
    await primeReuse(walk(s));
    writeFileSync(path, 'TOKEN=LEAKED\n');
    try {
      const before = reusedScanCount(walk(s));
      const r = await sandbox.run(req(s, ['cat', path]));
      expect(r.stdout).not.toContain('LEAKED');
      expect(reusedScanCount(walk(s))).toBe(before); // that walk ran again
    } finally {
      rmSync(path);
    }
  });

  // deeper than the cwd, whose landing names are looked at on every run anyway (scan.ts's namedPaths)
  it('a new landing (a hooks directory made on the host in a package) is read-only to the next run', async () => {
    mkdirSync(`${s.ws}/src/pkg`, { recursive: true });
    await primeReuse(s.ws);
    mkdirSync(`${s.ws}/src/pkg/.husky`);
    try {
      const r = await sandbox.run(req(s, ['sh', '-c', 'echo x > src/pkg/.husky/pre-commit']));
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toMatch(/Read-only file system/);
      expect(r.writeDenied).toBe(true);
    } finally {
      rmSync(`${s.ws}/src/pkg/.husky`, { recursive: true, force: true });
    }
  });

  it('a new host socket is hidden from the next run', async () => {
    await primeReuse(s.home);
    const sock = `${s.home}/agent.sock`;
    server = createServer((c) => c.end('AGENT\n'));
    await new Promise<void>((resolve) => server!.listen(sock, resolve));
    const r = await sandbox.run(req(s, ['sh', '-c', `test -S ${sock} && echo REACHABLE || echo hidden`]));
    expect(r.stdout).toBe('hidden\n');
  });
});

describe('a walk reused under names that are not UTF-8', () => {
  it('sees a .env made in a directory whose name is not UTF-8 (the check reaches it by its bytes)', () => {
    const odd = Buffer.concat([Buffer.from(`${s.ws}/`), Buffer.from([0xfe, 0x61]), Buffer.from('/sub')]);
    mkdirSync(odd, { recursive: true });
    const policy = req(s, ['true']).policy;
    const options = { home: s.home, reuseSettledMs: 0 };
    const envs = () => findPatternMatches(policy, options, new Set(), s.ws).matched.filter((p) => p.endsWith('/sub/.env'));
    expect(envs()).toEqual([]);
    const before = reusedScanCount(s.ws);
    expect(envs()).toEqual([]);
    expect(reusedScanCount(s.ws)).toBe(before + 1); // reused: every directory, the odd one included, checked by lstat
    writeFileSync(Buffer.concat([odd, Buffer.from('/.env')]), 'TOKEN=LEAKED\n');
    expect(envs()).toHaveLength(1);
    expect(reusedScanCount(s.ws)).toBe(before + 1);
    rmSync(Buffer.concat([Buffer.from(`${s.ws}/`), Buffer.from([0xfe, 0x61])]), { recursive: true });
  });
});
