import { LABELS } from './labels.js';
import type { ContainerMount, MountPlan } from './mount-plan.js';
import { type ContainerIdentity, type ContainerProfile, RESTRICTED_UID } from './profile.js';
import { dockerSeccompProfileFile } from './seccomp-profile.js';

/** Everything one hardened `docker run` is made from. */
export interface RunArgsInput {
  readonly name: string;
  readonly image: string;
  readonly profile: ContainerProfile;
  readonly plan: MountPlan;
  readonly identity: ContainerIdentity;
  /** `on` only when both the policy and the profile allow the network. */
  readonly network: 'none' | 'bridge';
  readonly cwd: string;
  /** Names only: the values reach the container through the docker client's environment, never its argv. */
  readonly envNames: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly interactive: boolean;
  /** Start in the background and print the id (a session container); one-shot runs stay attached. */
  readonly detach?: boolean;
  readonly argv: readonly [string, ...string[]];
  /**
   * The container's hard deadline, in whole seconds: the entry is `timeout -s KILL <s> argv…`
   * under the engine's init, so the container kills its own command then, whatever happens to the
   * process that started it (killed, engine connection lost).
   */
  readonly deadlineSeconds: number;
  /** The seccomp profile file; default the one {@link dockerSeccompProfileFile} writes for this process. */
  readonly seccompProfile?: string;
}

/** The program inside the container that enforces its deadline (busybox and coreutils both have it). */
export const DEADLINE_PROGRAM = 'timeout';

/** `timeout -s KILL <s> argv…`: the argv with the container's own hard deadline in front. */
export function withDeadline(argv: readonly [string, ...string[]], seconds: number): [string, ...string[]] {
  if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`a container deadline must be a whole number of seconds above 0, not ${seconds}`);
  return [DEADLINE_PROGRAM, '-s', 'KILL', String(seconds), ...argv];
}

/** A `--mount` value; fields are CSV, so each is quoted to keep commas and quotes in paths literal. */
function mountFlag(fields: readonly string[]): string {
  return fields.map((field) => (/[",\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(',');
}

function mountArgs(mount: ContainerMount): string[] {
  switch (mount.kind) {
    case 'bind':
      return ['--mount', mountFlag(['type=bind', `source=${mount.path}`, `target=${mount.path}`, ...(mount.readOnly ? ['readonly'] : [])])];
    case 'mask-file':
      return ['--mount', mountFlag(['type=bind', 'source=/dev/null', `target=${mount.path}`, 'readonly'])];
    case 'mask-dir':
      return ['--mount', mountFlag(['type=tmpfs', `target=${mount.path}`, 'tmpfs-size=4k', 'tmpfs-mode=0500'])];
  }
}

/**
 * The argv after `docker` for one hardened one-shot container (002 baseline): removed when it
 * ends, every capability dropped, no new privileges, read-only root with a tmpfs `/tmp`, memory
 * (without swap), cpu and pid limits, no network unless allowed, the policy's mounts, the image's
 * entrypoint replaced so the argv runs as given, never through a shell, under the container's own
 * hard deadline ({@link withDeadline}), and api-reach's syscall policy as its seccomp profile.
 */
export function dockerRunArgs(input: RunArgsInput): string[] {
  const { profile, identity } = input;
  const user = identity.kind === 'restricted' ? `${RESTRICTED_UID}:${RESTRICTED_UID}` : `${identity.uid}:${identity.gid}`;
  const args = [
    'run',
    '--rm',
    '--name',
    input.name,
    '--pull',
    'never',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    // the syscall policy the Linux backend enforces too (seccomp-profile.ts)
    '--security-opt',
    `seccomp=${input.seccompProfile ?? dockerSeccompProfileFile()}`,
    '--read-only',
    '--memory',
    profile.memory,
    '--memory-swap',
    profile.memory,
    '--cpus',
    profile.cpus,
    '--pids-limit',
    String(profile.pidsLimit),
    '--network',
    input.network,
    '--user',
    user,
    '--ipc',
    'private',
    // The engine's init as pid 1: the kernel ignores SIGKILL sent to a namespace's init from
    // inside, so the deadline's KILL must reach a command that is not pid 1.
    '--init',
    // Output is returned to the caller; the engine keeps no copy of it.
    '--log-driver',
    'none',
    '--hostname',
    'sandbox',
    '--workdir',
    input.cwd,
  ];
  if (input.plan.tmpfsTmp) args.push('--tmpfs', `/tmp:rw,nosuid,nodev,size=${profile.tmpfsSize},mode=1777`);
  for (const [key, value] of Object.entries(input.labels)) args.push('--label', `${key}=${value}`);
  args.push('--label', `${LABELS.sandbox}=1`);
  args.push('--label', `${LABELS.writable}=${JSON.stringify(writablePaths(input.plan))}`);
  for (const mount of input.plan.mounts) args.push(...mountArgs(mount));
  for (const name of input.envNames) args.push('--env', name);
  if (input.interactive) args.push('--interactive');
  if (input.detach) args.push('--detach');
  const [program, ...rest] = withDeadline(input.argv, input.deadlineSeconds);
  args.push('--entrypoint', program, input.image, ...rest);
  return args;
}

/** The host paths a container of `plan` can write: its read-write binds. */
export function writablePaths(plan: Pick<MountPlan, 'mounts'>): string[] {
  return plan.mounts.flatMap((m) => (m.kind === 'bind' && !m.readOnly ? [m.path] : []));
}
