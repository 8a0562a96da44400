import type { ReachCredential, SandboxPolicy, SandboxRunRequest, SandboxService, SandboxStdin } from '@aalis/api-reach';

/** Bytes kept of each of a command's stdout and stderr. */
export const MAX_OUTPUT = 1024 * 1024;

/** A command as a caller names it, before the credential gives it its environment and policy. */
export interface CommandAsk {
  readonly argv: readonly [string, ...string[]];
  /** A real path. */
  readonly cwd: string;
  readonly timeoutMs: number;
  /** Given whole, or live (a `StdinStream` a background command's `command_input` writes to). */
  readonly stdin?: SandboxStdin;
  /** `off` takes the network away even where the tier has it. */
  readonly network?: 'on' | 'off';
}

/**
 * The sandbox policy a command gets under `credential` right now: the credential's (its layers,
 * grants, and the never-written files in the control-deny layer), with the network taken away
 * when the command asked for `off`.
 */
export function commandPolicyOf(credential: ReachCredential, network?: 'on' | 'off'): SandboxPolicy {
  const policy = credential.sandboxPolicy();
  if (network !== 'off' || policy.network === 'off') return policy;
  // One network-off variant per policy object: the credential hands the same frozen policy to
  // every call of a conversation, and the backend checks a frozen policy it has seen only once.
  if (!Object.isFrozen(policy)) return { ...policy, network: 'off' };
  let off = networkOff.get(policy);
  if (off === undefined) {
    off = Object.freeze({ ...policy, network: 'off' as const });
    networkOff.set(policy, off);
  }
  return off;
}

const networkOff = new WeakMap<SandboxPolicy, SandboxPolicy>();

/**
 * The first run request of a command under a credential: its filtered environment, its policy
 * ({@link commandPolicyOf}) and, where the backend can keep refused writes aside, `keepRefused`.
 * The one place such a request is built: `run_command` (so `aalis exec` and the daemon) runs it,
 * and `aalis policy` hands it to the backend's `plan`, so what is printed is what runs.
 */
export async function sandboxRequestOf(credential: ReachCredential, service: SandboxService, ask: CommandAsk): Promise<SandboxRunRequest> {
  const env = await credential.processEnv('sandbox');
  return {
    argv: ask.argv,
    cwd: ask.cwd,
    env,
    timeoutMs: ask.timeoutMs,
    maxOutputBytes: MAX_OUTPUT,
    ...(ask.stdin !== undefined ? { stdin: ask.stdin } : {}),
    policy: commandPolicyOf(credential, ask.network),
    ...(service.commitKept !== undefined ? { keepRefused: true } : {}),
  };
}
