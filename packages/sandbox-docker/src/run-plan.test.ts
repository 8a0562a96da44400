import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLAN_RUN_DIR, SandboxPlanSchema } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { type DockerRunRequest, DockerSandbox } from './docker-sandbox.js';
import { LABELS } from './labels.js';

// `plan` against what `run` really hands the docker client: the client is a script that writes
// down its argv and then execs the real client, so the container is a real one on the engine.
// The container's name and deadline label exist only once a run starts; they are read as in a plan.
function recordingClient(): { binary: string; starts: () => string[][] } {
  const dir = tempDir('aalis-docker-plan-');
  const real = execFileSync('sh', ['-c', 'command -v docker'], { encoding: 'utf8' }).trim();
  const binary = join(dir, 'docker');
  mkdirSync(join(dir, 'log'));
  writeFileSync(binary, `#!/bin/sh\nf=$(mktemp ${dir}/log/start.XXXXXX)\nprintf '%s\\0' "$0" "$@" > "$f"\nexec ${real} "$@"\n`);
  chmodSync(binary, 0o755);
  const starts = () =>
    readdirSync(join(dir, 'log'))
      .map((f) => join(dir, 'log', f))
      .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
      .map((f) => readFileSync(f, 'utf8').split('\0').slice(0, -1));
  return { binary, starts };
}

function asPlanned(argv: readonly string[]): string[] {
  const out = [...argv];
  const name = out.indexOf('--name');
  if (name >= 0) out[name + 1] = PLAN_RUN_DIR;
  return out.map((a) => (a.startsWith(`${LABELS.deadline}=`) ? `${LABELS.deadline}=${PLAN_RUN_DIR}` : a));
}

describe.skipIf(engineSkip)('DockerSandbox.plan is what run executes', { timeout: 120_000 }, () => {
  it.each([
    ['the readonly tier (restricted identity, nothing writable)', 'restricted' as const, false],
    ['the workspace tier (the owner identity, a writable root, a denied file)', 'owner' as const, true],
  ])('%s: the real client argv and env', async (_, identity, writes) => {
    const client = recordingClient();
    const ws = tempDir();
    writeFileSync(join(ws, '.env'), 'SECRET=1\n');
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-plan', client: { binary: client.binary } });
    const request: DockerRunRequest = {
      argv: ['sh', '-c', 'id -u; echo "$ONLY"'],
      cwd: ws,
      env: { ONLY: 'this', PATH: '/usr/bin:/bin' },
      timeoutMs: 20_000,
      sandboxSpec: { profile: 'stdio', env: ['ONLY'] },
      policy: policy(writes ? { write: [ws], writeDeny: [{ path: join(ws, '.env') }] } : { readDeny: [{ path: join(ws, '.env') }] }),
    };
    const plan = SandboxPlanSchema.parse(await box.plan(request));
    const result = await box.run(request);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('this');
    const started = client.starts().filter((argv) => argv[1] === 'run');
    expect(started).toHaveLength(1);
    expect(asPlanned(started[0]!)).toEqual(plan.argv);
    // the identity the run had is the one the plan shows (the old preview always showed the restricted one)
    const user = plan.argv[plan.argv.indexOf('--user') + 1];
    expect(result.stdout.trim().split('\n')[0]).toBe(user?.split(':')[0]);
    expect(user).toBe(identity === 'restricted' ? '10001:10001' : `${process.getuid?.()}:${process.getgid?.()}`);
    expect(plan.env.ONLY).toBe('this');
    expect(plan.mounts.some((m) => m.target === join(ws, '.env') && m.mode === (writes ? 'ro' : 'hidden'))).toBe(true);
  });
});
