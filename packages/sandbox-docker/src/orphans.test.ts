import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, policy, TEST_IMAGE, gate, tempDir, until } from '../test/engine.js';
import { DockerDeployment } from './docker-deployment.js';
import { DockerSandbox } from './docker-sandbox.js';
import { instanceNameOf } from './instance-name.js';
import { LABELS } from './labels.js';
import { DEADLINE_SLACK_MS, orphansIn } from './orphans.js';
import { currentOwner, ownerLabels, ownerStateOf } from './owner.js';

const here = dirname(fileURLToPath(import.meta.url));

/** test/hang.ts in its own process: one container of `instance` running `sleep 120`. */
function hang(instance: string, timeoutMs = 120_000, dataRoot?: string): ChildProcess {
  const args = [instance, String(timeoutMs), ...(dataRoot !== undefined ? [dataRoot] : [])];
  return spawn(process.execPath, ['--import', 'tsx', join(here, '..', 'test', 'hang.ts'), ...args], { cwd: join(here, '..'), stdio: 'ignore' });
}

async function kill(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
}

describe('whether a container owner is alive', () => {
  const me = currentOwner();
  const mine = ownerLabels(me);
  const cases: [string, Record<string, string>, 'alive' | 'dead' | 'unknown'][] = [
    ['this process', mine, 'alive'],
    ['a pid with no process', { ...mine, [LABELS.ownerPid]: '4194303' }, 'dead'],
    ['this pid with another start time (reused)', { ...mine, [LABELS.ownerStart]: '1' }, 'dead'],
    ['another host', { ...mine, [LABELS.ownerHost]: `${me.host}-elsewhere`, [LABELS.ownerPid]: '4194303' }, 'unknown'],
    ['another boot of this host name', { ...mine, [LABELS.ownerBoot]: 'another-boot', [LABELS.ownerPid]: '4194303' }, 'unknown'],
    ['another pid namespace', { ...mine, [LABELS.ownerPidns]: 'pid:[1]', [LABELS.ownerPid]: '4194303' }, 'unknown'],
    ['no owner labels (an older container)', {}, 'unknown'],
    ['an unreadable start time', { ...mine, [LABELS.ownerStart]: '', [LABELS.ownerPid]: '4194303' }, 'unknown'],
  ];
  it.each(cases)('%s', (_what, labels, state) => {
    expect(ownerStateOf(labels, me)).toBe(state);
  });
});

describe('which listed containers are orphans', () => {
  const me = currentOwner();
  const now = 1_000_000_000_000;
  const line = (id: string, labels: Record<string, string>, form: 'string' | 'object') =>
    `${id}\t${JSON.stringify(form === 'object' ? labels : Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(','))}`;
  const dead = { ...ownerLabels(me), [LABELS.ownerPid]: '4194303', [LABELS.run]: 'old' };
  const elsewhere = { ...dead, [LABELS.ownerHost]: 'another-host' };
  const cases: [string, Record<string, string>, boolean][] = [
    ['owner dead', { ...dead, [LABELS.deadline]: String(now + 60_000) }, true],
    ['owner alive (this process, another run label)', { ...ownerLabels(me), [LABELS.run]: 'old', [LABELS.deadline]: String(now + 60_000) }, false],
    ['this run', { ...dead, [LABELS.run]: 'this-run' }, false],
    ['owner on another host, deadline ahead', { ...elsewhere, [LABELS.deadline]: String(now + 60_000) }, false],
    ['owner on another host, deadline long past', { ...elsewhere, [LABELS.deadline]: String(now - DEADLINE_SLACK_MS - 1) }, true],
    ['owner on another host, deadline just past (the engine may still be killing it)', { ...elsewhere, [LABELS.deadline]: String(now - 1) }, false],
    ['no labels at all', {}, false],
  ];
  for (const form of ['string', 'object'] as const) {
    it.each(cases)(`%s (labels as ${form})`, (_what, labels, orphan) => {
      expect(orphansIn(line('c1', labels, form), 'this-run', now, me)).toEqual(orphan ? ['c1'] : []);
    });
  }
});

describe('instance names', () => {
  it('are unique per data directory and stable through symlinks', () => {
    const a = tempDir();
    const b = tempDir();
    const link = join(tempDir(), 'link');
    symlinkSync(a, link);
    expect(instanceNameOf(a)).toMatch(/^daemon-[0-9a-f]{12}$/);
    expect(instanceNameOf(a)).not.toBe(instanceNameOf(b));
    expect(instanceNameOf(link)).toBe(instanceNameOf(a));
    expect(() => instanceNameOf(join(a, 'missing'))).toThrow();
  });
});

describe.skipIf(engineSkip)('containers of a daemon killed mid-run', () => {
  it('outlive the killed process, and the next start removes them', async () => {
    const instance = 'test-orphans';
    const label = `${LABELS.instance}=${instance}`;
    expect(containersLabelled(label)).toEqual([]);
    const child = hang(instance);
    await until(() => containersLabelled(label).length === 1);
    await kill(child);
    // SIGKILL gives the client no chance to clean up: the engine keeps the container running.
    expect(containersLabelled(label)).toHaveLength(1);

    const next = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance });
    expect(await next.reapOrphans()).toBe(1);
    expect(containersLabelled(label)).toEqual([]);
    expect(await next.reapOrphans()).toBe(0);
  }, 180_000);

  it('end by their own deadline, with nobody left to remove them', async () => {
    const instance = 'test-orphans-deadline';
    const label = `${LABELS.instance}=${instance}`;
    // The container's own deadline: 8 s + 5 s grace. The client's own limit (8 s) must not fire
    // before the kill, or the client removes the container itself: 8 s leaves a loaded engine
    // time to list it (2 s did not always).
    const child = hang(instance, 8_000);
    // Running, not only created: a client killed between create and start leaves a container
    // that never runs (and is reaped at the next start, its owner dead).
    await until(() => containersLabelled(label, 'running').length === 1);
    await kill(child);
    const killedAt = Date.now();
    expect(containersLabelled(label)).toHaveLength(1);
    await until(() => containersLabelled(label).length === 0);
    // Not before its deadline could have fired (it started less than 8 s before the kill, as its
    // client had not stopped it yet, so its deadline was at least 5 s after the kill).
    expect(Date.now() - killedAt).toBeGreaterThan(4_000);
  }, 180_000);

  it('a running sandbox never reaps its own live containers', async () => {
    const instance = 'test-orphans-live';
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance });
    // the command runs until the reap is done (a 3 s sleep could end before a loaded engine listed it)
    const go = gate();
    const run = box.run({ argv: ['sh', '-c', go.wait], cwd: go.dir, env: {}, timeoutMs: 120_000, policy: policy() });
    await until(() => containersLabelled(`${LABELS.instance}=${instance}`).length === 1);
    expect(await box.reapOrphans()).toBe(0);
    go.open();
    expect((await run).exitCode).toBe(0);
    expect(containersLabelled(`${LABELS.instance}=${instance}`)).toEqual([]);
  }, 180_000);
});

describe.skipIf(engineSkip)('two daemons with the same instance name', () => {
  it("leave each other's containers alone at start and at stop; the dead one's are reaped", async () => {
    const instance = 'test-same-instance';
    const label = `${LABELS.instance}=${instance}`;
    const rootB = tempDir('aalis-deploy-b-');
    mkdirSync(rootB, { recursive: true });
    const other = hang(instance, 120_000, rootB);
    try {
      await until(() => containersLabelled(label).length === 1);
      const [theirs] = containersLabelled(label);

      // Daemon A starts beside B (start reaps orphans) and runs a command of its own.
      const a = await DockerDeployment.start({ dataRoot: tempDir('aalis-deploy-a-'), images: { stdio: TEST_IMAGE }, instance });
      expect(containersLabelled(label)).toEqual([theirs]);
      const alice = await a.user('alice');
      const mine = alice.sandbox.run({ argv: ['sleep', '60'], cwd: alice.workspace, env: {}, timeoutMs: 60_000, policy: alice.policy('readonly') });
      await until(() => containersLabelled(label).length === 2);

      // A stops: only its own container goes.
      expect(await a.stop()).toBe(1);
      expect((await mine).signal).toBe('SIGKILL');
      expect(containersLabelled(label)).toEqual([theirs]);

      // B is killed: now its container is an orphan, and the next start takes it.
      await kill(other);
      const again = await DockerDeployment.start({ dataRoot: tempDir('aalis-deploy-a-'), images: { stdio: TEST_IMAGE }, instance });
      expect(containersLabelled(label)).toEqual([]);
      await again.stop();
    } finally {
      await kill(other);
    }
  }, 240_000);
});
