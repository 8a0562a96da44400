import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLAN_RUN_DIR, SandboxPlanSchema } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { ENV_FD, LAUNCH_ENV } from './launch-env.js';
import { tmpEnv } from './run-plan.js';
import { SHIM_TAG, shimArgv } from './prepared.js';
import { createLinuxSandbox } from './service.js';
import { findPerl } from './system-interpreters.js';
import { findExecutable } from './tools.js';

// `plan` against what `run` really starts: bwrap (and, under the overlay model, unshare) are
// replaced by scripts that write down their argv and then exec the real binary, so the run is a
// real sandboxed run and the argv compared is the one the kernel was given. The only difference
// allowed is the run's scratch directory, which has a name only once a run makes it.
// The scripts write in the workspace: a root daemon's bwrap starts from the root map's step, where
// every host mount but the writable roots' overlays is read-only (premount.ts readOnlyByStep), so
// the record of such a start is a write of the run, committed with it.
let s: Scene;
let logs: string;
beforeAll(() => {
  s = makeScene();
  logs = join(s.ws, '.plan-logs');
  mkdirSync(logs);
});
afterAll(() => {
  s.cleanup();
});

function recorder(name: string): string {
  const real = findExecutable(name);
  if (!real) throw new Error(`${name} is not installed`);
  const script = join(logs, name);
  writeFileSync(script, `#!/bin/sh\nf=$(mktemp ${logs}/${name}.XXXXXX)\nprintf '%s\\0' "$0" "$@" > "$f"\nenv > "$f.env"\nexec ${real} "$@"\n`);
  chmodSync(script, 0o755);
  return script;
}

/** The argv of the last recorded start of `name` that ran `marker`, the run directory read as in a plan. */
function recorded(name: string, marker: string): string[] {
  const starts = readdirSync(logs)
    .filter((f) => f.startsWith(`${name}.`) && !f.endsWith('.env'))
    .map((f) => join(logs, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
    .map((f) => readFileSync(f, 'utf8').split('\0').slice(0, -1))
    .filter((argv) => argv.includes(marker));
  const argv = starts.at(-1);
  if (!argv) throw new Error(`no start of ${name} ran ${marker}`);
  return argv.map((a) => a.replace(/\/[^\0]*?\/aalis-sbx-\d+-\d+-[a-z0-9]+/g, PLAN_RUN_DIR));
}

/** The environment the last recorded start of `name` that ran `marker` was given (the recorder's own PWD left out). */
function recordedEnv(name: string, marker: string): string[] {
  const start = readdirSync(logs)
    .filter((f) => f.startsWith(`${name}.`) && !f.endsWith('.env'))
    .map((f) => join(logs, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
    .filter((f) => readFileSync(f, 'utf8').split('\0').includes(marker))
    .at(-1);
  if (!start) throw new Error(`no start of ${name} ran ${marker}`);
  return readFileSync(`${start}.env`, 'utf8').trim().split('\n').filter((l) => !/^(PWD|OLDPWD|SHLVL|_)=/.test(l)).sort();
}

describe('LinuxSandbox.plan is what run executes', { timeout: 120_000 }, () => {
  it.each(['look', 'auto'] as const)('hostModel %s: the argv (namespaces, capabilities, seccomp fd, mounts) and the env', async (hostModel) => {
    // the root map (root-map.ts) puts the real python3 first, which cannot be a recorder: off here, compared below
    const sb = createLinuxSandbox({ bwrap: recorder('bwrap'), unshare: recorder('unshare'), hostModel, rootUidMap: 'off' });
    const marker = `plan-marker-${hostModel}`;
    const request = req(s, ['/usr/bin/env', marker]);
    const plan = SandboxPlanSchema.parse(await sb.plan(request));
    const r = await sb.run(request);
    expect(r.exitCode).not.toBe(0); // env is given an unknown command; what matters is that it ran
    const overlay = plan.argv[0]!.endsWith('/unshare');
    const started = recorded(overlay ? 'unshare' : 'bwrap', marker);
    expect(started).toEqual(plan.argv);
    // what `aalis policy` used to leave out
    const bwrapArgs = plan.argv.slice(plan.argv.findIndex((a) => a.endsWith('/bwrap')));
    for (const flag of ['--unshare-user', '--unshare-pid', '--unshare-net', '--disable-userns', '--new-session', '--die-with-parent']) expect(bwrapArgs).toContain(flag);
    expect(bwrapArgs.join(' ')).toContain('--cap-drop ALL');
    expect(bwrapArgs.join(' ')).toContain('--seccomp 3');
    expect(plan.files.map((f) => [f.name, f.at])).toContainEqual(['seccomp', 'fd 3']);
    expect(plan.post.map((p) => p.step)).toContain(overlay ? 'commit' : 'landing sweep');
    if (hostModel === 'look') expect(overlay).toBe(false);
    // the program the plan starts got the plan's env, the launch chain's fixed one (launch-env.ts; the recorder's sh adds PWD)
    expect(plan.env).toEqual(LAUNCH_ENV);
    expect(recordedEnv(overlay ? 'unshare' : 'bwrap', marker)).toEqual(Object.entries(LAUNCH_ENV).map(([k, v]) => `${k}=${v}`));
    // the command got its own, nothing else (bwrap adds PWD); the plan names it
    const own = req(s, ['/usr/bin/env']);
    const seen = await sb.run(own);
    const expected = { ...own.env, ...tmpEnv(own.policy.tmp) };
    expect(seen.stdout.trim().split('\n').filter((l) => !l.startsWith('PWD=')).sort()).toEqual(Object.entries(expected).map(([k, v]) => `${k}=${v}`).sort());
    expect(plan.pre.find((p) => p.step === 'environment')?.detail).toContain(Object.keys(expected).join(', '));
    expect(plan.files.map((f) => [f.name, f.at])).toContainEqual(['env', `fd ${ENV_FD}`]);
  });

  it.skipIf(process.getuid?.() !== 0).each(['look', 'auto'] as const)(
    'hostModel %s, a root daemon: the plan starts with the root map, and from the first program it starts on it is what ran',
    async (hostModel) => {
      const sb = createLinuxSandbox({ bwrap: recorder('bwrap'), unshare: recorder('unshare'), hostModel });
      const marker = `plan-marker-mapped-${hostModel}`;
      const request = req(s, ['/usr/bin/env', marker]);
      const plan = SandboxPlanSchema.parse(await sb.plan(request));
      expect(plan.argv.slice(1, 3)).toEqual(['-I', '-S']);
      expect(plan.argv[0]).toMatch(/python3/);
      expect(plan.pre.map((p) => p.step)).toContain('root map');
      await sb.run(request);
      const unshareAt = plan.argv.findIndex((a) => a.endsWith('/unshare'));
      const bwrapAt = plan.argv.findIndex((a) => a.endsWith('/bwrap'));
      const first = unshareAt >= 0 && unshareAt < bwrapAt ? unshareAt : bwrapAt;
      expect(recorded(first === bwrapAt ? 'bwrap' : 'unshare', marker)).toEqual(plan.argv.slice(first));
    },
  );

  it.skipIf(process.getuid?.() !== 0)('a root daemon with prepare on: the plan names the shim, and a warm run started exactly the plan with the shim for the command', async () => {
    const sb = createLinuxSandbox({ bwrap: recorder('bwrap'), hostModel: 'overlay', prepare: 'on' });
    try {
      const request = req(s, ['/bin/echo', 'plan-marker-warm']);
      const plan = SandboxPlanSchema.parse(await sb.plan(request));
      const step = plan.pre.find((p) => p.step === 'prepared sandbox');
      const perl = findPerl()!;
      expect(step?.detail).toContain(`${perl} -e <shim> ${SHIM_TAG}`);
      await sb.run(req(s, ['true'])); // its end prepares the next sandbox of this policy
      await sb.preparationsSettled();
      const r = await sb.run(request);
      expect(r.stdout).toBe('plan-marker-warm\n');
      expect(sb.preparedCounts().used).toBe(1);
      // the last prepared start (the one the run took, or the next, made alike but for its run folder)
      const started = recorded('bwrap', SHIM_TAG).map((a) => a.replace(/^aalis-sbx-\d+-\d+-[a-z0-9]+$/, PLAN_RUN_DIR));
      const bwrapAt = plan.argv.findIndex((a) => a.endsWith('/bwrap'));
      const commandAt = plan.argv.lastIndexOf('--') + 1;
      expect(plan.argv.slice(commandAt)).toEqual(request.argv);
      expect(started).toEqual([...plan.argv.slice(bwrapAt, commandAt), ...shimArgv(perl, PLAN_RUN_DIR)]);
    } finally {
      await sb.close();
    }
  });
});
