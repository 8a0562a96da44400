import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineSkip, TEST_IMAGE, tempDir } from '../test/engine.js';
import { CgroupFreezer } from './cgroup-freezer.js';
import { pausedRefusal } from './session-container.js';

const LABEL = 'dev.aalis.test=cgroup-freezer';
const started: string[] = [];
afterAll(() => {
  if (started.length > 0) execFileSync('docker', ['rm', '-f', ...started], { stdio: 'ignore' });
});

/** A container that writes a growing count into `dir/tick` every 10 ms: it moves only while it runs. */
function ticker(dir: string): string {
  const id = execFileSync('docker', ['run', '--detach', '--rm', '--label', LABEL, '--network', 'none', '--user', '0:0', '--mount', `type=bind,source=${dir},target=/w`, '--entrypoint', 'sh', TEST_IMAGE, '-c', 'i=0; while :; do i=$((i+1)); echo $i > /w/tick; sleep 0.01; done'], { encoding: 'utf8' }).trim();
  started.push(id);
  return id;
}

/** The count after `ms`; its write truncates first, so an empty read is read again (a frozen ticker may stay empty: then '' each time). */
async function tickAfter(dir: string, ms: number): Promise<string> {
  await new Promise((r) => setTimeout(r, ms));
  let text = '';
  for (let i = 0; i < 20 && text === ''; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 5));
    text = readFileSync(join(dir, 'tick'), 'utf8');
  }
  return text;
}

describe.skipIf(engineSkip)('the freezer of a real container', () => {
  it('holds every process of it still until thawed, as root; leaves it to the engine otherwise', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const id = ticker(dir);
    const freezer = new CgroupFreezer();
    const first = await tickAfter(dir, 300);
    expect(Number(await tickAfter(dir, 300))).toBeGreaterThan(Number(first)); // it moves while it runs
    const outcome = await freezer.freeze(id);
    if (process.getuid?.() !== 0) {
      // the freezer is root's: the engine is asked instead, and nothing was frozen here
      expect(outcome).toBe('engine');
      expect(freezer.frozen(id)).toBe(false);
      return;
    }
    expect(outcome).toBe('frozen');
    expect(freezer.frozen(id)).toBe(true);
    // the engine does not know: it says running, and refuses an exec in runc's words
    expect(execFileSync('docker', ['inspect', '--format', '{{.State.Status}}', id], { encoding: 'utf8' }).trim()).toBe('running');
    const refusal = spawnSync('docker', ['exec', id, 'true'], { encoding: 'utf8' });
    expect([refusal.status, refusal.stderr]).toEqual([126, '']);
    // what a session's command that met such a section is started again on (nothing of it ran)
    expect(pausedRefusal({ code: refusal.status, stdout: { text: () => refusal.stdout }, stderr: refusal.stderr })).toBe(true);
    const still = await tickAfter(dir, 50);
    expect(await tickAfter(dir, 300)).toBe(still);
    expect(freezer.thaw(id)).toBe(true);
    expect(freezer.frozen(id)).toBe(false);
    expect(await tickAfter(dir, 300)).not.toBe(still);
  });

  it('leaves a frozen container removable by the engine (a session closed while a section holds it)', { timeout: 60_000 }, async () => {
    if (process.getuid?.() !== 0) return; // nothing can be frozen directly to begin with
    const id = ticker(tempDir());
    expect(await new CgroupFreezer().freeze(id)).toBe('frozen');
    execFileSync('docker', ['rm', '--force', id], { stdio: 'pipe', timeout: 30_000 });
    expect(execFileSync('docker', ['ps', '--all', '--quiet', '--filter', `id=${id}`], { encoding: 'utf8' }).trim()).toBe('');
  });
});

// cgroup v2 cannot run here (this machine kind is v1): its layout and files are a stand-in tree,
// which shows the paths read and the values written, not the kernel's freezing.
describe('the freezer files it uses', () => {
  const id = 'a'.repeat(64);

  it('writes cgroup v2 `cgroup.freeze` and waits for `frozen 1` in `cgroup.events`', async () => {
    const root = tempDir();
    const dir = join(root, 'system.slice', `docker-${id}.scope`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cgroup.freeze'), '0\n');
    writeFileSync(join(dir, 'cgroup.events'), 'populated 1\nfrozen 0\n');
    const freezer = new CgroupFreezer(root);
    const freezing = freezer.freeze(id);
    await new Promise((r) => setTimeout(r, 30));
    expect(readFileSync(join(dir, 'cgroup.freeze'), 'utf8')).toBe('1');
    writeFileSync(join(dir, 'cgroup.events'), 'populated 1\nfrozen 1\n');
    expect(await freezing).toBe('frozen');
    expect(freezer.frozen(id)).toBe(true);
    expect(freezer.thaw(id)).toBe(true);
    expect(readFileSync(join(dir, 'cgroup.freeze'), 'utf8')).toBe('0');
  });

  it.each([
    ['a short id', 'abc123'],
    ['a path', `../../${'a'.repeat(58)}`],
    ['upper case', 'A'.repeat(64)],
  ])('names no freezer for %s: the engine is asked', async (_what, bad) => {
    const root = tempDir();
    mkdirSync(join(root, 'freezer', 'docker', bad), { recursive: true });
    writeFileSync(join(root, 'freezer', 'docker', bad, 'freezer.state'), 'THAWED\n');
    expect(await new CgroupFreezer(root).freeze(bad)).toBe('engine');
  });

  it('asks the engine when no layout it knows has the container', async () => {
    expect(await new CgroupFreezer(tempDir()).freeze(id)).toBe('engine');
    expect(new CgroupFreezer(tempDir()).thaw(id)).toBe(false);
  });
});

describe('a refusal of an exec into a held container', () => {
  const runc = 'OCI runtime exec failed: exec failed: cannot exec in a paused container (use --ignore-paused to override): unknown\n';
  it.each([
    [126, runc, '', true, "runc's, for a container frozen directly"],
    [1, '', 'Error response from daemon: Container abc is paused, unpause the container before exec\n', true, "the engine's, for one it paused"],
    [1, runc, '', false, 'the same words with another exit: the command printed them'],
    [126, `${runc}more\n`, '', false, 'more output than the refusal: the command ran'],
    [126, runc, 'x\n', false, 'stderr besides'],
    [0, '', 'Error response from daemon: Container abc is paused\n', false, 'exit 0: the command ran'],
  ] as [number, string, string, boolean, string][])('exit %s, stdout %j, stderr %j: %s (%s)', (code, stdout, stderr, expected) => {
    expect(pausedRefusal({ code, stdout: { text: () => stdout }, stderr })).toBe(expected);
  });
});
