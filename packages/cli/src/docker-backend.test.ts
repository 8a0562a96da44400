// `aalis exec --backend docker` killed mid-run, with the real binary, a real engine and the local
// test image (packages/sandbox-docker/scripts/prepare.sh builds it).
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SCRATCH } from '../../../test/scratch.js';

const IMAGE = 'aalis/sandbox-test:latest';
// the CLI from source (scripts/source.mjs): the tests run without a build
const bin = join(import.meta.dirname, '..', 'scripts', 'source.mjs');

function engineMissing(): string | undefined {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore', timeout: 20_000 });
    return undefined;
  } catch {
    return `no Docker Engine answers, or it has no ${IMAGE} (bash packages/sandbox-docker/scripts/prepare.sh builds it)`;
  }
}
const missing = engineMissing();
if (missing && process.env.CI !== 'true') console.warn(`skipping the aalis exec --backend docker tests: ${missing}`);

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-cli-docker-')));
const workspace = join(root, 'workspace');
mkdirSync(workspace);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const instance = `test-cli-${process.pid}`;
// CI starts without SHELL; so does this test, wherever it runs (the run must stay quiet then too).
const { SHELL: _shell, ...inherited } = process.env;
const env = { ...inherited, AALIS_DATA: join(root, 'data'), AALIS_DOCKER_IMAGE: IMAGE, AALIS_INSTANCE: instance };

function containers(status?: 'running'): string[] {
  const which = status === undefined ? ['--all'] : ['--filter', `status=${status}`];
  const out = execFileSync('docker', ['ps', ...which, '--quiet', '--filter', `label=dev.aalis.instance=${instance}`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() !== '');
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

function execInBackground(timeoutSeconds: number): ChildProcess {
  const args = [bin, 'exec', '--backend', 'docker', '--tier', 'readonly', '--timeout', String(timeoutSeconds), '--', 'sleep', '100'];
  return spawn(process.execPath, args, { cwd: workspace, env, stdio: 'ignore' });
}

async function sigkill(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
}

describe.skipIf(missing !== undefined && process.env.CI !== 'true')('aalis exec --backend docker, SIGKILLed mid-run', () => {
  it("leaves a container that its own deadline ends (--timeout plus 5 s), with no later run needed", async () => {
    const cli = execInBackground(2);
    await until(() => containers('running').length === 1, 60_000);
    await sigkill(cli);
    const killedAt = Date.now();
    expect(containers()).toHaveLength(1); // SIGKILL gave the client no chance to remove it
    await until(() => containers().length === 0, 20_000);
    expect(Date.now() - killedAt).toBeGreaterThan(3_000);
  }, 90_000);

  it.each([['SIGTERM', 143], ['SIGINT', 130]] as const)('%s mid-run: exec removes its container before it exits (status %i) and says why', async (signal, status) => {
    const args = [bin, 'exec', '--backend', 'docker', '--tier', 'readonly', '--timeout', '300', '--', 'sleep', '100'];
    const cli = spawn(process.execPath, args, { cwd: workspace, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    cli.stderr?.on('data', (d) => (stderr += d));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => cli.on('exit', (code, sig) => r({ code, signal: sig })));
    await until(() => containers('running').length === 1, 60_000);
    cli.kill(signal);
    // before: the default action killed the process and its container ran on to its deadline
    expect(await ended, stderr).toEqual({ code: status, signal: null });
    expect(containers()).toEqual([]);
    expect(stderr).toContain(`aalis: ${signal} received; the command was killed and its sandbox removed.`);
  }, 90_000);

  it('leaves a container that the next run reaps (its owner is dead)', async () => {
    const cli = execInBackground(300);
    await until(() => containers('running').length === 1, 60_000);
    await sigkill(cli);
    expect(containers()).toHaveLength(1);
    const next = spawnSync(process.execPath, [bin, 'exec', '--backend', 'docker', '--tier', 'readonly', '--', 'true'], { cwd: workspace, env, encoding: 'utf8', timeout: 60_000 });
    expect(next.stderr).toBe('');
    expect(next.status).toBe(0);
    expect(containers()).toEqual([]);
  }, 120_000);
});
