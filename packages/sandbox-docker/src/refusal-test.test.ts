import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { refusedWritesIn } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { planMounts } from './mount-plan.js';
import { dockerRefusal } from './refusal-test.js';

async function scene() {
  const ws = tempDir();
  const ro = tempDir();
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  const plan = await planMounts({ policy: policy({ write: [ws], readAllowWithin: [ro], writeDeny: [{ path: join(ws, '.git') }] }), cwd: ws });
  return { ws, ro, plan };
}

describe('dockerRefusal', () => {
  it('counts EROFS anywhere, EACCES/EPERM outside the writable mounts, EBUSY on a mount point', async () => {
    const { ws, ro, plan } = await scene();
    const cases: [string, string[]][] = [
      ['touch: /etc/x: Read-only file system', ['/etc/x']],
      [`mv: can't rename '${ro}/keep': Read-only file system`, [`${ro}/keep`]],
      [`rm: can't remove '${ws}/.git/hooks/x': Read-only file system`, [`${ws}/.git/hooks/x`]],
      [`touch: ${ro}/new: Permission denied`, [`${ro}/new`]],
      ['npm error code EROFS', []],
      [`rmdir: '${ws}/.git': Device or resource busy`, [`${ws}/.git`]],
    ];
    for (const [line, paths] of cases) expect(refusedWritesIn(line, ws, dockerRefusal(plan)), line).toEqual({ denied: true, paths });
  });

  it('does not count the host permissions inside a writable mount, /tmp, the kernel trees, or prose', async () => {
    const { ws, plan } = await scene();
    for (const line of [
      `touch: ${ws}/locked/x: Permission denied`,
      `chown: ${ws}/f: Operation not permitted`,
      'touch: /tmp/x: Permission denied',
      "sh: can't create /proc/sys/kernel/hostname: Read-only file system",
      "sh: can't kill pid 1: Operation not permitted",
      `mkdir: can't create directory '${ws}/src': File exists`,
    ]) {
      expect(refusedWritesIn(line, ws, dockerRefusal(plan)), line).toEqual({ denied: false, paths: [] });
    }
  });
});

describe.skipIf(engineSkip)('dockerRefusal on a real container', () => {
  const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-refusal' });

  it('reports what the mounts refused, with busybox\'s own lines', async () => {
    const ws = tempDir();
    const ro = tempDir();
    writeFileSync(join(ro, 'keep'), 'k');
    chmodSync(ro, 0o755);
    const result = await box.run({
      // relative names are read against the run's cwd (a shell's `cd` is not followed)
      argv: ['sh', '-c', `mv keep moved; touch "it's"; mkdir /etc/x; echo > /proc/sys/kernel/hostname; echo done`],
      cwd: ro,
      env: {},
      timeoutMs: 30_000,
      policy: policy({ write: [ws], readAllowWithin: [ro] }),
    });
    expect(result.stdout).toBe('done\n');
    expect(result.stderr).toMatch(/can't rename 'keep': Read-only file system/);
    expect(result.stderr).toMatch(/hostname: Read-only file system/);
    expect(result.writeDenied).toBe(true);
    // the kernel's own tree is not a refused write: no grant opens it
    expect([...result.deniedWrites].sort(), result.stderr).toEqual([`${ro}/it's`, `${ro}/keep`, '/etc/x'].sort());
    expect(existsSync(join(ro, 'keep'))).toBe(true);
  }, 60_000);

  it('a write the host\'s permissions refuse inside a writable root is not the sandbox\'s refusal', async () => {
    const ws = tempDir();
    mkdirSync(join(ws, 'locked'));
    chmodSync(ws, 0o755);
    chmodSync(join(ws, 'locked'), 0o755); // owned by root: uid 10001 may not write in it
    const result = await box.run({ argv: ['sh', '-c', `touch ${ws}/locked/x; echo done`], cwd: ws, env: {}, timeoutMs: 30_000, identity: 'restricted', policy: policy({ write: [ws] }) });
    expect(result.stderr).toMatch(new RegExp(`${ws}/locked/x: Permission denied`));
    expect(result.writeDenied).toBe(false);
    expect(result.deniedWrites).toEqual([]);
  }, 60_000);
});
