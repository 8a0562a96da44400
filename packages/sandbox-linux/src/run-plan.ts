import { createHash } from 'node:crypto';
import type { PlanFile, PlanMount, PlanStep, SandboxPlan, SandboxRunRequest } from '@aalis/api-reach';
import { NAMESPACE_FLAGS, NETWORK_OFF_FLAGS, SECCOMP_FD } from './bwrap-flags.js';
import { encodePath, hasRawBytes } from '@aalis/core';
import { commandEnvBytes, ENV_FD, envFlags, LAUNCH_ENV } from './launch-env.js';
import { EXEC_SYNC_FLAGS, SETUP_SYNC_FLAGS } from './network.js';
import type { Translation } from './translate.js';

/** The fd bwrap reads its mount arguments from (`--args`) when a path in them is not UTF-8. */
export const ARGS_FD = 6;

/** What one run's command line is made of; the run and `plan` both build it with {@link linuxPlan}. */
export interface LinuxPlanInput {
  readonly request: SandboxRunRequest;
  readonly translation: Translation;
  /** The bubblewrap binary the run starts. */
  readonly bwrap: string;
  /** The seccomp program handed to bwrap on {@link SECCOMP_FD}. */
  readonly seccomp: Uint8Array;
  /** Extra bwrap arguments after the mounts (the daemon's temp hidden, under the overlay model). */
  readonly hideArgs?: readonly string[];
  /** Under the overlay model: the mount step bwrap runs inside (`RunOverlays.command`). */
  readonly wrap?: (bwrap: string, bwrapArgs: readonly string[]) => string[];
  /** bwrap waits for the release just before the command, after its mounts (network.ts {@link EXEC_SYNC_FLAGS}); default at its setup's start. */
  readonly syncAtExec?: boolean;
  /** What happens around the program, for the reader of the plan. */
  readonly pre: readonly PlanStep[];
  readonly post: readonly PlanStep[];
}

/** A plan and the bytes its argv refers to by fd: what `spawn` hands the child, exactly. */
export interface LinuxRunPlan {
  readonly plan: SandboxPlan;
  readonly seccomp: Uint8Array;
  /** The command's own environment, which only bwrap's child gets (launch-env.ts). */
  readonly commandEnv: Readonly<Record<string, string>>;
  /** {@link commandEnv} as bwrap reads it on {@link ENV_FD}. */
  readonly envBytes: Uint8Array;
  /** The mount arguments as NUL-separated bytes, when a path in them is not UTF-8 (then on {@link ARGS_FD}). */
  readonly argsBytes?: Uint8Array;
}

/**
 * The temp variables inside the sandbox: the session temp (also at `/tmp` there), so a file a
 * tool puts in its temp dir survives the command at a path the host sees too. Set whatever the
 * request's environment says, which could otherwise point somewhere that vanishes.
 */
export function tmpEnv(tmp: string | undefined): Record<string, string> {
  return tmp === undefined ? {} : { TMPDIR: tmp, TMP: tmp, TEMP: tmp };
}

function fileOf(name: string, at: string, bytes: Uint8Array): PlanFile {
  return { name, at, bytes: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') };
}

function mountOf(m: Translation['mounts'][number]): PlanMount {
  if (m.state === 'private-tmp') return { target: m.path, mode: 'tmpfs', why: m.why };
  if (m.state === 'hidden') return { target: m.path, mode: 'hidden', why: m.why };
  return { target: m.path, mode: m.state, source: m.path, why: m.why };
}

/**
 * The argv, env, mounts and fds of one run: namespaces and capability drop, the setup sync fd,
 * `--disable-userns` when the network is off, the command's environment (on its fd), the mounts,
 * the cwd, the seccomp fd, then the command. The plan's `env` is the launch chain's fixed one
 * (launch-env.ts). `spawn` executes exactly this; `LinuxSandbox.plan` returns it.
 */
export function linuxPlan(input: LinuxPlanInput): LinuxRunPlan {
  const { request, translation } = input;
  const raw = translation.args.some(hasRawBytes);
  const args = [
    ...NAMESPACE_FLAGS,
    ...(input.syncAtExec ? EXEC_SYNC_FLAGS : SETUP_SYNC_FLAGS),
    ...(request.policy.network === 'on' ? [] : NETWORK_OFF_FLAGS),
    ...envFlags(),
    // names that are not UTF-8 cannot be argv strings: bwrap reads them, as bytes, from ARGS_FD
    ...(raw ? ['--args', String(ARGS_FD)] : translation.args),
    ...(input.hideArgs ?? []),
    '--chdir',
    request.cwd,
    '--seccomp',
    String(SECCOMP_FD),
    '--',
    ...request.argv,
  ];
  const argv = input.wrap ? input.wrap(input.bwrap, args) : [input.bwrap, ...args];
  const argsBytes = raw ? new Uint8Array(Buffer.concat(translation.args.map((a) => Buffer.concat([encodePath(a), Buffer.of(0)])))) : undefined;
  const commandEnv = { ...request.env, ...tmpEnv(request.policy.tmp) };
  const envBytes = commandEnvBytes(commandEnv);
  const files = [fileOf('seccomp', `fd ${SECCOMP_FD}`, input.seccomp), fileOf('env', `fd ${ENV_FD}`, envBytes), ...(argsBytes ? [fileOf('args', `fd ${ARGS_FD}`, argsBytes)] : [])];
  // the names only: the values are the command's (a token the config allows) and a plan is printed
  const names = Object.keys(commandEnv);
  const envStep = { step: 'environment', detail: `every program before the sandbox gets PATH=${LAUNCH_ENV.PATH} only; the command gets its own environment from bwrap (--clearenv, then --setenv from fd ${ENV_FD}): ${names.length > 0 ? names.join(', ') : '(empty)'}` };
  const plan: SandboxPlan = {
    backend: 'linux',
    argv,
    env: { ...LAUNCH_ENV },
    mounts: translation.mounts.map(mountOf),
    files,
    pre: [envStep, ...input.pre],
    post: input.post,
  };
  return { plan, seccomp: input.seccomp, commandEnv, envBytes, ...(argsBytes ? { argsBytes } : {}) };
}
