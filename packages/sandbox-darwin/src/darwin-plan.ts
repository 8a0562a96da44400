import { createHash } from 'node:crypto';
import type { SandboxPlan } from '@aalis/api-reach';
import type { SandboxExecRun } from './sandbox-exec-process.js';
import { defineArgs } from './profile-params.js';

/** `sandbox-exec -D KEY=VALUE… -p PROFILE -- argv`: the command line {@link runSandboxExec} starts, exactly. */
export function sandboxExecArgv(run: Pick<SandboxExecRun, 'sandboxExec' | 'profile' | 'params' | 'argv'>): [string, ...string[]] {
  return [run.sandboxExec, ...defineArgs(run.params ?? {}), '-p', run.profile, '--', ...run.argv];
}

/**
 * The {@link SandboxPlan} of one sandbox-exec run: its argv (the profile text and its `-D`
 * parameters in it), the env, the profile as a file to read. Seatbelt mounts nothing: every
 * decision is in the profile.
 */
export function darwinPlan(run: SandboxExecRun): SandboxPlan {
  const bytes = Buffer.from(run.profile);
  return {
    backend: 'darwin',
    argv: sandboxExecArgv(run),
    env: { ...run.env },
    mounts: [],
    files: [{ name: 'profile', at: 'argv, after -p', text: run.profile, bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') }],
    pre: [],
    post: [{ step: 'refused writes', detail: 'stderr is read for writes Seatbelt refused (EPERM) of paths the policy lets be read but not written' }],
  };
}
