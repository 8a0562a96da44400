import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxPolicyAllows } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { policy, tempDir } from '../test/engine.js';
import { deniedWritesAfter, planMounts } from './mount-plan.js';

const ENV_PATTERN = { pattern: '(.*/)?\\.env[^/]*(/.*)?', except: [{ pattern: '.*/\\.env\\.example' }] };

function workspace() {
  const root = tempDir();
  const ws = join(root, 'ws');
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  mkdirSync(join(ws, 'node_modules', 'x'), { recursive: true });
  mkdirSync(join(ws, 'sub'), { recursive: true });
  writeFileSync(join(ws, '.env'), 'SECRET=1');
  writeFileSync(join(ws, '.env.example'), 'SECRET=');
  writeFileSync(join(ws, 'sub', '.env.local'), 'SECRET=2');
  symlinkSync('/etc/passwd', join(ws, 'link'));
  const data = join(root, 'data');
  mkdirSync(join(data, 'run'), { recursive: true });
  mkdirSync(join(data, 'tmp', 'sess'), { recursive: true });
  return { root, ws, data, tmp: join(data, 'tmp', 'sess') };
}

describe('planMounts', () => {
  it('mounts writable roots rw, the cwd ro, masks deny-read and re-mounts landings and the control plane ro', async () => {
    const { ws, data, tmp } = workspace();
    const plan = await planMounts({
      cwd: ws,
      policy: policy({
        write: [ws, tmp],
        readAllowWithin: [tmp],
        readDeny: [{ path: data, except: [] }, ENV_PATTERN],
        writeDeny: [{ path: join(ws, '.git') }, { pattern: '.*/\\.envrc' }],
        writeExceptions: [{ path: join(ws, 'node_modules') }],
        controlDeny: [{ path: join(ws, 'node_modules', 'x') }],
      }),
    });
    expect(plan.mounts).toEqual([
      { kind: 'bind', path: ws, readOnly: false },
      { kind: 'mask-file', path: join(ws, '.env') },
      { kind: 'bind', path: join(ws, '.git'), readOnly: true },
      { kind: 'bind', path: tmp, readOnly: false },
      { kind: 'bind', path: join(ws, 'node_modules', 'x'), readOnly: true },
      { kind: 'mask-file', path: join(ws, 'sub', '.env.local') },
    ]);
    expect(plan.modeAt(join(ws, '.env.example'))).toBe('rw');
    expect(plan.modeAt(join(data, 'run'))).toBe('masked');
    expect(plan.tmpfsTmp).toBe(true);
    expect([...plan.deniedInodes.values()].flat().map(String).sort()).toEqual([join(ws, '.git'), join(ws, '.git', 'hooks'), join(ws, 'node_modules', 'x')]);
  });

  it("decides every path under the roots as api-reach's reference sandboxPolicyAllows does", async () => {
    const { ws, data, tmp } = workspace();
    const p = policy({
      write: [ws, tmp],
      readAllowWithin: [tmp],
      readDeny: [{ path: data }, ENV_PATTERN],
      writeDeny: [{ path: join(ws, '.git') }, { pattern: '.*/\\.envrc' }, { path: join(ws, 'node_modules') }],
      writeExceptions: [{ path: join(ws, 'node_modules', 'x') }, { path: join(ws, '.git', 'hooks') }],
      controlDeny: [{ path: join(ws, '.git', 'hooks') }],
    });
    const plan = await planMounts({ cwd: ws, policy: p });
    const paths = ['', '/.env', '/.env.example', '/sub/.env.local', '/sub/.envrc', '/.git', '/.git/hooks/pre-commit', '/node_modules/y', '/node_modules/x/z', '/sub/new'].map((s) => ws + s);
    for (const path of [...paths, tmp, join(tmp, 'f')]) {
      expect({ path, read: plan.modeAt(path) !== 'masked' }).toEqual({ path, read: sandboxPolicyAllows(p, 'read', path, 'linux') });
      expect({ path, write: plan.writableAt(path) }).toEqual({ path, write: sandboxPolicyAllows(p, 'write', path, 'linux') });
    }
  });

  it('a read-only policy mounts the cwd read-only and nothing else', async () => {
    const { ws } = workspace();
    const plan = await planMounts({ cwd: ws, policy: policy() });
    expect(plan.mounts).toEqual([{ kind: 'bind', path: ws, readOnly: true }]);
    expect(plan.writableRoots).toEqual([]);
  });

  it('finds writes the mounts could not stop: a new landing, not a new .env', async () => {
    const { ws } = workspace();
    const plan = await planMounts({ cwd: ws, policy: policy({ write: [ws], writeDeny: [{ pattern: '.*/\\.envrc' }], readDeny: [ENV_PATTERN] }) });
    writeFileSync(join(ws, 'sub', '.envrc'), 'evil');
    writeFileSync(join(ws, 'sub', '.env.new'), 'deny-read does not limit writes');
    expect((await deniedWritesAfter(plan)).denied.map((w) => w.path)).toEqual([join(ws, 'sub', '.envrc')]);
  });

  it.each([
    ['/', 'cannot be mounted'],
    ['/var/run', 'cannot be mounted into a container: it is or holds /run/'],
  ])('refuses a writable root %s', async (root, message) => {
    const { ws } = workspace();
    await expect(planMounts({ cwd: ws, policy: policy({ write: [root] }) })).rejects.toThrow(message);
  });

  it('refuses to mount the daemon root, or anything in or around it', async () => {
    const { ws, root } = workspace();
    await expect(planMounts({ cwd: ws, policy: policy(), neverMount: [root] })).rejects.toMatchObject({ rule: 'never-mount' });
    await expect(planMounts({ cwd: ws, policy: policy(), neverMount: [join(ws, '.git')] })).rejects.toMatchObject({ rule: 'never-mount' });
  });

  it('refuses a missing cwd and a tree too big to check the deny patterns against', async () => {
    const { ws } = workspace();
    await expect(planMounts({ cwd: join(ws, 'nope'), policy: policy() })).rejects.toMatchObject({ rule: 'cwd' });
    await expect(planMounts({ cwd: ws, policy: policy({ readDeny: [ENV_PATTERN] }), walkLimit: 3 })).rejects.toMatchObject({ rule: 'walk-limit' });
  });

  it('a .env deeper than PATH_MAX, where the walk cannot list: refused, since it can be neither checked nor masked', async () => {
    // before, the walk skipped what it could not list: the .env had no mask, and a program that
    // walks down by relative names (openat, chdir) read it in the container
    const { ws } = workspace();
    const name = 'd'.repeat(200);
    execFileSync('python3', ['-I', '-S', '-c', `import os
fd = os.open(${JSON.stringify(ws)}, os.O_RDONLY)
for i in range(25):
    os.mkdir(${JSON.stringify(name)}, dir_fd=fd)
    n = os.open(${JSON.stringify(name)}, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
os.close(os.open(".env", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
`]);
    const refused = planMounts({ cwd: ws, policy: policy({ readDeny: [ENV_PATTERN] }) });
    await expect(refused).rejects.toMatchObject({ rule: 'unlisted' });
    await expect(refused).rejects.toThrow(/deeper than PATH_MAX .*nothing was run/);
    execFileSync('rm', ['-rf', join(ws, name)]); // rm walks deeper than PATH_MAX
  });

  it.skipIf(process.getuid?.() === 0)('a directory the daemon cannot list is masked whole (what it holds was not checked)', async () => {
    const { ws } = workspace();
    mkdirSync(join(ws, 'closed'));
    writeFileSync(join(ws, 'closed', 'notes.txt'), 'x');
    chmodSync(join(ws, 'closed'), 0o000);
    try {
      const plan = await planMounts({ cwd: ws, policy: policy({ readDeny: [ENV_PATTERN] }) });
      expect(plan.mounts).toContainEqual({ kind: 'mask-dir', path: join(ws, 'closed') });
      expect(plan.modeAt(join(ws, 'closed', '.env'))).toBe('masked');
    } finally {
      chmodSync(join(ws, 'closed'), 0o755);
    }
  });
});
