import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPlanSchema } from '@aalis/api-reach';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT, workspacePolicy } from '../test/policies.js';
import { createDarwinSandbox, sandboxExecRun } from './darwin-sandbox.js';
import { runSandboxExec } from './sandbox-exec-process.js';

// This machine has no macOS: the plan is built (profile text and sandbox-exec argv) but Seatbelt
// never runs. `run` is the probe's gate, then runSandboxExec of sandboxExecRun's result; here
// that same pair starts a recorder standing in for sandbox-exec, which writes down the argv and
// the env it was given, so what is compared is what the process really received.
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-darwin-plan-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const recorder = join(dir, 'sandbox-exec');
writeFileSync(recorder, `#!/bin/sh\nprintf '%s\\0' "$0" "$@" > ${dir}/argv\nenv -0 > ${dir}/env\n`);
chmodSync(recorder, 0o755);

describe('the darwin plan is what run starts (built, not run: no macOS here)', () => {
  it('the sandbox-exec argv with the profile text and its -D parameters, and exactly the env', async () => {
    const ws = PROJECT;
    const request = {
      argv: ['/bin/sh', '-c', 'touch x'] as [string, ...string[]],
      cwd: ws,
      env: { PATH: '/usr/bin:/bin', ONLY: 'this' },
      timeoutMs: 5_000,
      policy: workspacePolicy,
    };
    const plan = SandboxPlanSchema.parse(await createDarwinSandbox({ sandboxExec: recorder, userDirs: null }).plan(request));
    const run = sandboxExecRun(request, recorder, undefined);
    await runSandboxExec({ ...run, cwd: dir });
    const argv = readFileSync(join(dir, 'argv'), 'utf8').split('\0').slice(0, -1);
    expect(argv).toEqual(plan.argv);
    const profile = plan.files.find((f) => f.name === 'profile');
    expect(argv[argv.indexOf('-p') + 1]).toBe(profile?.text);
    expect(profile?.text).toContain('(deny default)');
    expect(argv.filter((a) => a === '-D').length).toBeGreaterThan(0);
    expect(argv.slice(argv.indexOf('--') + 1)).toEqual(request.argv);
    const env = readFileSync(join(dir, 'env'), 'utf8').split('\0').filter((l) => l !== '' && !l.startsWith('PWD=') && !l.startsWith('SHLVL=') && !l.startsWith('_='));
    expect(env.sort()).toEqual(Object.entries(plan.env).map(([k, v]) => `${k}=${v}`).sort());
  });
});
