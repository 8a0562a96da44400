import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';

/*
 * The host model as an attacker and a user meet it (issue 13): the walk behind deny-read and the
 * looks for landings, each case a real sandboxed process.
 */

const FF = Buffer.of(0xff); // a name that is not UTF-8
const bytes = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
const PY = (code: string, ...args: string[]): [string, ...string[]] => ['python3', '-c', code, ...args];

let t: Scene;
let sb: ReturnType<typeof createLinuxSandbox>;
beforeAll(() => {
  t = makeScene();
  sb = createLinuxSandbox({ scan: { home: t.home }, undoneDir: join(t.root, 'undone'), hostModel: 'look' }); // the walk and the look (overlay.test.ts: the overlay)
});
afterAll(() => execFileSync('rm', ['-rf', t.root])); // rm walks deeper than PATH_MAX

describe('deny-read holds wherever the contract says', { timeout: 120_000 }, () => {
  const cases: [string, (s: Scene) => string][] = [
    ["in the workspace's parent (a monorepo root)", (s) => join(s.root, '.env')],
    ['in node_modules', (s) => join(s.ws, 'node_modules/pkg/dist/.env')],
    ['in another project under HOME', (s) => join(s.home, 'projects/other/.env.local')],
    ['four levels under HOME', (s) => join(s.home, 'code/org/proj/.env')],
    ['in a toolchain cache', (s) => join(s.home, '.npm/_npx/abc/.env')],
  ];
  it.each(cases)('a .env %s is not readable', async (_, where) => {
    const file = where(t);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, 'SECRET=outside\n');
    const policy = workspacePolicy(t, { write: [t.ws, t.sessionTmp, join(t.home, '.npm')] });
    const r = await sb.run(req(t, ['sh', '-c', `cat '${file}' 2>&1; true`], { policy }));
    expect(r.stdout).not.toContain('SECRET');
  });

  it('a .env in a directory whose name is not UTF-8 is hidden, and the command still runs', async () => {
    mkdirSync(bytes(t.ws, '/', FF, '/deeper'), { recursive: true });
    writeFileSync(bytes(t.ws, '/', FF, '/deeper/.env'), 'SECRET=raw\n');
    writeFileSync(bytes(t.ws, '/', FF, '/deeper/plain.txt'), 'plain\n');
    const r = await sb.run(req(t, PY("import os\nd=b'\\xff/deeper/'\nfor n in (b'.env', b'plain.txt'):\n    try: print(open(d+n).read().strip())\n    except OSError as e: print(type(e).__name__)")));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('SECRET');
    expect(r.stdout).toContain('plain');
  });

  it('a .env in the workspace of the readonly tier (no write root there) is hidden', async () => {
    const policy = workspacePolicy(t, { write: [t.sessionTmp], writeExceptions: [] });
    mkdirSync(join(t.ws, 'ro/sub'), { recursive: true });
    writeFileSync(join(t.ws, 'ro/sub/.env'), 'SECRET=ro\n');
    const r = await sb.run(req(t, ['sh', '-c', 'cat ro/sub/.env .env 2>&1; true'], { policy }));
    expect(r.stdout).not.toContain('SECRET');
  });

  it('a .env below a path longer than PATH_MAX is hidden', async () => {
    // 24 levels of 200-byte names: about 4,800 bytes, made relative to each level as the kernel allows
    const seg = 'd'.repeat(200);
    execFileSync('python3', ['-c', `import os\nos.chdir(${JSON.stringify(t.ws)})\nfor i in range(24):\n    os.mkdir('${seg}'); os.chdir('${seg}')\nopen('.env','w').write('SECRET=deep\\n')`]);
    const r = await sb.run(req(t, PY(`import os\nfor i in range(24):\n    try: os.chdir('${seg}')\n    except OSError as e: print(type(e).__name__); break\ntry: print(open('.env').read())\nexcept OSError as e: print(type(e).__name__)`)));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('SECRET');
  });
});

describe('listings kept between walks', { timeout: 120_000 }, () => {
  it('a directory changed since the last walk is read again: a new .env is hidden, a new landing taken away', async () => {
    mkdirSync(join(t.ws, 'kept/sub'), { recursive: true });
    writeFileSync(join(t.ws, 'kept/sub/a.txt'), 'a\n');
    await new Promise((r) => setTimeout(r, 2_200)); // long enough unchanged for its listing to be trusted
    const first = await sb.run(req(t, ['cat', 'kept/sub/a.txt']));
    expect(first.stdout).toBe('a\n');
    writeFileSync(join(t.ws, 'kept/sub/.env'), 'SECRET=kept\n');
    const second = await sb.run(req(t, ['sh', '-c', 'cat kept/sub/.env 2>&1; echo x > kept/sub/.envrc; true']));
    expect(second.stdout).not.toContain('SECRET');
    expect(existsSync(join(t.ws, 'kept/sub/.envrc'))).toBe(false);
    expect(second.deniedWrites).toContain(join(t.ws, 'kept/sub/.envrc'));
  });

  // the siblings: each changes a directory whose listing was kept and trusted, in a way that could
  // slip past a cache keyed on less than device, inode and ctime
  const changes: [string, (dir: string) => string][] = [
    [
      'a directory renamed into it from outside the workspace',
      (dir) => {
        const outside = join(t.root, 'moved-in');
        mkdirSync(join(outside, 'pkg/deep'), { recursive: true });
        writeFileSync(join(outside, 'pkg/deep/.env'), 'SECRET=moved\n');
        execFileSync('mv', [join(outside, 'pkg'), join(dir, 'pkg')]);
        return join(dir, 'pkg/deep/.env');
      },
    ],
    [
      'the same directory moved out, changed, and moved back',
      (dir) => {
        const away = join(t.root, 'away');
        execFileSync('mv', [join(dir, 'inner'), away]);
        writeFileSync(join(away, '.env'), 'SECRET=roundtrip\n');
        execFileSync('mv', [away, join(dir, 'inner')]);
        return join(dir, 'inner/.env');
      },
    ],
    [
      'a new subtree many levels deep',
      (dir) => {
        mkdirSync(join(dir, 'a/b/c/d/e/f/g'), { recursive: true });
        writeFileSync(join(dir, 'a/b/c/d/e/f/g/.env.local'), 'SECRET=deep\n');
        return join(dir, 'a/b/c/d/e/f/g/.env.local');
      },
    ],
    [
      'a .env made, then the directory back-dated with touch -d (mtime as before)',
      (dir) => {
        writeFileSync(join(dir, '.env'), 'SECRET=backdated\n');
        execFileSync('touch', ['-d', '2001-01-01 00:00:00', dir]);
        return join(dir, '.env');
      },
    ],
  ];
  it.each(changes)('a kept listing is read again after %s', async (_, change) => {
    const dir = join(t.ws, `kept-${changes.findIndex(([n]) => n === _)}`);
    mkdirSync(join(dir, 'inner'), { recursive: true });
    writeFileSync(join(dir, 'inner/a.txt'), 'a\n');
    execFileSync('touch', ['-d', '2001-01-01 00:00:00', dir]); // the back-dating case starts from the same mtime
    await new Promise((r) => setTimeout(r, 2_200)); // long enough unchanged for its listing to be trusted
    const first = await sb.run(req(t, ['cat', `${dir}/inner/a.txt`]));
    expect(first.stdout).toBe('a\n');
    const secret = change(dir);
    const second = await sb.run(req(t, ['sh', '-c', `cat '${secret}' 2>&1; true`]));
    expect(second.stdout).not.toContain('SECRET');
    expect(readFileSync(secret, 'utf8')).toContain('SECRET'); // it is there on the host
  });
});

describe('the cost of hiding many files', { timeout: 120_000 }, () => {
  it('groups hidden files past the cap into their directories, and they stay unreadable', async () => {
    for (let i = 0; i < 300; i++) {
      mkdirSync(join(t.ws, `many/d${i}`), { recursive: true });
      writeFileSync(join(t.ws, `many/d${i}/.env.a`), 'SECRET=a\n');
      writeFileSync(join(t.ws, `many/d${i}/.env.b`), 'SECRET=b\n');
    }
    writeFileSync(join(t.ws, 'many/d7/code.js'), 'ok\n');
    // 600 hidden files would be 600 bind mounts, each re-reading the mount table in bwrap
    const plan = sb.translate(workspacePolicy(t), t.ws);
    expect(plan.mounts.filter((m) => m.path.startsWith(join(t.ws, 'many/'))).length).toBeLessThanOrEqual(256);
    const r = await sb.run(req(t, ['sh', '-c', 'cat many/d7/.env.a many/d299/.env.b many/d7/code.js 2>&1; true']));
    expect(r.stdout).not.toContain('SECRET');
    // and the look after the run knew them as existing: nothing of the user's moved
    expect(readFileSync(join(t.ws, 'many/d7/.env.a'), 'utf8')).toBe('SECRET=a\n');
    expect(r.deniedWrites).toEqual([]);
  });
});

describe('the landing look', { timeout: 120_000 }, () => {
  it('never moves anything outside the writable roots while a directory is swapped for a symlink under it', async () => {
    const outside = join(t.root, 'outside');
    mkdirSync(join(outside, '.git'), { recursive: true });
    writeFileSync(join(outside, '.git/HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(outside, '.envrc'), 'export X=1\n');
    const watched = createLinuxSandbox({ scan: { home: t.home }, landingSweepMs: 1, undoneDir: join(t.root, 'undone-race'), hostModel: 'look' });
    // the command swaps race/ between a directory (holding many entries, so the look lingers) and a symlink to outside/
    // race/ sits among thousands of files, so the look (listing them) lingers between listing
    // p/ and entering p/race
    const racer = `import os, time
os.makedirs('p/race-src')
for i in range(5000): open('p/f%d' % i, 'w').close()
os.chdir('p')
end = time.time() + 6
while time.time() < end:
    os.rename('race-src', 'race'); time.sleep(0.001); os.rename('race', 'race-src')
    os.symlink(${JSON.stringify(outside)}, 'race'); time.sleep(0.003); os.unlink('race')
`;
    const r = await watched.run(req(t, PY(racer), { timeoutMs: 30_000 }));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(outside, '.git/HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(readFileSync(join(outside, '.envrc'), 'utf8')).toBe('export X=1\n');
  });

  it('never moves a landing into a folder the command can write in (it could hold its symlinks)', async () => {
    const undone = join(t.ws, 'state/undone'); // a workspace that holds the daemon's state: HOME, say
    const r = await createLinuxSandbox({ scan: { home: t.home }, undoneDir: undone, hostModel: 'look' }).run(req(t, ['sh', '-c', 'mkdir -p state/undone/x && mkdir -p z/.vscode && echo {} > z/.vscode/tasks.json']));
    expect(r.writeDenied).toBe(true);
    expect(existsSync(join(t.ws, 'z/.vscode'))).toBe(false);
    expect(readdirSync(undone)).toEqual(['x']); // nothing went there
    expect(r.movedAside).toEqual([{ path: join(t.ws, 'z/.vscode'), reason: 'deleted' }]);
    expect(r.stderr).not.toContain(join(t.ws, 'z/.vscode'));
  });

  it('takes away a landing made in a directory whose name is not UTF-8', async () => {
    const r = await sb.run(req(t, PY("import os\nos.makedirs(b'new-\\xfe/.vscode', exist_ok=True)\nopen(b'new-\\xfe/.vscode/tasks.json','w').write('{}')\nopen(b'new-\\xfe/.envrc','w').write('x')")));
    expect(r.exitCode).toBe(0);
    expect(existsSync(bytes(t.ws, '/new-', Buffer.of(0xfe), '/.vscode'))).toBe(false);
    expect(existsSync(bytes(t.ws, '/new-', Buffer.of(0xfe), '/.envrc'))).toBe(false);
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites.length).toBe(2);
  });

  it('takes away a landing made below PATH_MAX', async () => {
    const seg = 'e'.repeat(200);
    const r = await sb.run(req(t, PY(`import os\nfor i in range(22):\n    os.mkdir('${seg}'); os.chdir('${seg}')\nopen('.envrc','w').write('x')`)));
    expect(r.exitCode).toBe(0);
    expect(r.writeDenied).toBe(true);
    const left = await execa('find', [t.ws, '-name', '.envrc'], { reject: false });
    expect(left.stdout).toBe('');
    expect(readdirSync(join(t.root, 'undone')).length).toBeGreaterThan(0);
  });
});

const child = join(import.meta.dirname, 'host-model.child.testing.ts');

describe.skipIf(!canRunAsNobody(child))('what the walk cannot list, as an unprivileged user (nobody)', { timeout: 120_000 }, () => {
  it('hides a directory it cannot list whole, and says when the look could not see into one', async () => {
    const u = makeScene();
    try {
      mkdirSync(join(u.ws, 'locked'));
      writeFileSync(join(u.ws, 'locked/.env'), 'SECRET=locked\n');
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, u.root]);
      execFileSync('chmod', ['0311', join(u.ws, 'locked')]);
      const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(u));
      const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 100_000 });
      expect(r.stderr).toBe('');
      const out = JSON.parse(r.stdout);
      expect(out.locked.out).not.toContain('SECRET');
      expect(out.look.out).toBe('made');
      expect(out.look.err).toMatch(/could not be listed, so what is in them was not checked against the deny rules: .*\/ws\/sealed/);
    } finally {
      execFileSync('rm', ['-rf', u.root]);
    }
  });
});
