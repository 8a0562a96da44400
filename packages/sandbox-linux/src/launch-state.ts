import { SandboxUnavailableError } from '@aalis/api-reach';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';
import { LoopbackFilterError } from './loopback-filter.js';
import { namespaceRefused } from './network.js';
import { OVERLAY_FAILURE } from './overlay-mount.js';
import { PidLimitError } from './pid-limit.js';
import { ROOT_MAP_FAILURE } from './root-map.js';
import { READ_ONLY_FAILURE } from './root-map.helper.js';
import type { Translation } from './translate.js';
import { hostMountPoint, vanishedHostMount, vanishedRootMapMount } from './vanished-mount.js';

/*
 * One run's launch as a state machine (service.ts `spawn` drives it): bwrap starts, the sandbox
 * it makes waits on the setup sync fd until the host-side steps (placeholders, pid limit, network)
 * are in place, then is released to run the command. A kill before the sandbox's pid is known is
 * only noted: bwrap killed then would leave its sandbox waiting in its setup, unknown to us, and an
 * end of the sync fd, even ours at exit, lets it go on to run the command (tested).
 */

/** Where one run's launch stands. */
export type LaunchState =
  /** bwrap started, the sandbox's pid not known yet; `killAsked`: a kill waits for the pid. */
  | { readonly kind: 'starting'; readonly killAsked: boolean }
  /** The sandbox exists and waits on the sync fd: nothing of the command has run. */
  | { readonly kind: 'held'; readonly pid: number }
  /** The sync fd is closed: the command runs. */
  | { readonly kind: 'released'; readonly pid: number }
  /** bwrap ended before it made the sandbox; its stderr says why. */
  | { readonly kind: 'no-sandbox'; readonly error: Error }
  /** Killed (a timeout, an abort, or a setup step that failed), with the sandbox's pid when it was known. */
  | { readonly kind: 'killed'; readonly pid?: number };

/** The host-side setup steps before the command is released. */
export const SETUP_STEPS = ['placeholders', 'pid-limit', 'network'] as const;

/** A setup step that failed: the command was never released, so nothing of it ran. */
export interface SetupFailure {
  readonly step: (typeof SETUP_STEPS)[number];
  readonly error: Error;
}

/** What kills a launch: bwrap (its death takes the sandbox's pid 1 and its pid namespace) and a sandbox still in its setup. */
export interface Killer {
  killBwrap(): void;
  /** SIGKILL to the sandbox's pid 1, only while it still is the process read at the start (pinned-pid.ts): never a bare pid. */
  killPid(pid: number): void;
}

/** The state after a kill is asked for. */
export function killed(state: LaunchState, k: Killer): LaunchState {
  switch (state.kind) {
    case 'starting':
      return { kind: 'starting', killAsked: true };
    case 'held':
    case 'released':
      k.killBwrap();
      // a pid 1 still in its setup, waiting on the sync fd, has not set its parent-death signal
      // yet and would hold the output pipes open for ever: killed by pid too
      k.killPid(state.pid);
      return { kind: 'killed', pid: state.pid };
    case 'no-sandbox':
      k.killBwrap();
      return { kind: 'killed' };
    case 'killed':
      return state;
  }
}

/** The state once the sandbox's pid was read (or bwrap ended without one): a kill asked meanwhile, or a failed step, is done now. */
export function sandboxKnown(state: LaunchState, pid: { ok: true; pid: number } | { ok: false; error: Error }, failure: SetupFailure | undefined, k: Killer): LaunchState {
  if (state.kind !== 'starting') return state;
  const next: LaunchState = pid.ok ? { kind: 'held', pid: pid.pid } : { kind: 'no-sandbox', error: pid.error };
  return state.killAsked || failure ? killed(next, k) : next;
}

/** The state after the sync fd is closed; only a held sandbox is released. */
export function released(state: LaunchState, closeSync: () => void): LaunchState {
  if (state.kind !== 'held') return state;
  closeSync();
  return { kind: 'released', pid: state.pid };
}

/** bwrap failed to set up for a reason that a fresh attempt does not share; nothing ran. */
export class VanishedMountError extends AalisError<LinuxErrorCode> {
  constructor(message: string) {
    super('setup-transient', message);
  }
}

/**
 * A mount point that vanished since the scan (a container shim's socket), or bwrap's loopback
 * setup losing a netlink race with slirp4netns configuring the same namespace.
 */
export function transientSetupFailure(stderr: string, translation: Translation, exists: (p: string) => boolean, mounted: (p: string) => boolean = hostMountPoint): boolean {
  if (/^bwrap: loopback: /m.test(stderr)) return true;
  if (vanishedHostMount(stderr, exists, mounted)) return true;
  return translation.mounts.some((m) => stderr.includes(m.path) && !exists(m.path));
}


const unavailable = (reason: string, fix: string) => new SandboxUnavailableError('linux', reason, fix);

/** What a launch ended as, for {@link launchFailure}. */
export interface LaunchEnd {
  readonly state: LaunchState;
  readonly failure: SetupFailure | undefined;
  readonly stderr: string;
  readonly exitCode: number | undefined;
  /** The run has overlays (their step's failures are named), or a root map. */
  readonly overlays: boolean;
  readonly rootMap: boolean;
  /** Started by the kept-alive launcher (launcher.ts), whose run child says a failed start with a `aalis-rootmap: ` line, mapped or not. */
  readonly viaLauncher?: boolean;
  /** bwrap reported the command's exit (exec-report.ts): it was exec'd, so its stderr is its own, whatever it says. */
  readonly commandRan?: boolean;
  /**
   * A prepared sandbox: bwrap set up before the run, so nothing of its setup can have vanished
   * since; a `bwrap: ` line is the shim's (prepared.ts) or the command's, never retried.
   */
  readonly setupDone?: boolean;
  /** The launcher (launcher.ts) died before it reported the run's end: why. */
  readonly launcherLost?: string;
}

/**
 * Why the launch did not run the command, as the error the run throws, or undefined when the
 * command ran (its exit is the result). Every failure of a step before the command is an error:
 * nothing ran then.
 */
/**
 * bubblewrap's own line when the sandbox was set up and the command could not be exec'd in it
 * (`bwrap: execvp NAME: No such file or directory`): not a sandbox that could not start, but a
 * command that does not exist (or may not run) in the sandbox's view. Answered as a shell does,
 * 127 or 126 with the reason; before, it was "the sandbox cannot start" (exit 125 from `aalis
 * exec`), which sent a user to `aalis doctor` for a typo (found by a new user's trial).
 */
export function commandNotRun(exitCode: number | null, stderr: string): { readonly exitCode: 126 | 127; readonly stderr: string } | undefined {
  if (exitCode !== 1) return undefined;
  const m = /^bwrap: execvp (.*): ([^\n]+)\n?$/.exec(stderr);
  if (!m) return undefined;
  const [, name, why] = m;
  const missing = why === 'No such file or directory';
  // ENOENT is also a script whose #! interpreter is not there: said, as the shell does not
  return { exitCode: missing ? 127 : 126, stderr: `aalis: ${name}: ${missing ? 'command not found in the sandbox (or the interpreter its #! line names)' : `cannot run it in the sandbox (${why})`}\n` };
}

export function launchFailure(end: LaunchEnd, translation: Translation, exists: (p: string) => boolean, mounted: (p: string) => boolean = hostMountPoint): Error | undefined {
  const { state, failure, stderr } = end;
  // whatever the command did, its end was never seen: an error, never a result (and nothing is committed)
  if (end.launcherLost !== undefined) {
    return unavailable(`the launcher died during the run (${end.launcherLost}); the command was killed and nothing it wrote was committed`, 'run it again (a new launcher starts); see `aalis doctor`');
  }
  const hadSandbox = state.kind === 'held' || state.kind === 'released' || (state.kind === 'killed' && state.pid !== undefined);
  if (end.overlays && !hadSandbox && stderr.includes(OVERLAY_FAILURE)) {
    return unavailable(`the writable roots could not be mounted as overlays: ${stderr.trim()}`, 'see `aalis doctor` (host-model); nothing was run');
  }
  // an ordinary user's run started by the launcher (`launcher: all`): its child could not set it up
  if (!end.rootMap && end.viaLauncher === true && !hadSandbox && stderr.includes(ROOT_MAP_FAILURE)) {
    return unavailable(`the launcher could not start the run: ${stderr.trim()}`, 'run it again (a new run child is forked); see `aalis doctor`; nothing was run');
  }
  if (end.rootMap && !hadSandbox && stderr.includes(ROOT_MAP_FAILURE)) {
    if (vanishedRootMapMount(stderr, exists, mounted)) return new VanishedMountError(stderr.trim());
    if (/^aalis-rootmap: cannot hide the /m.test(stderr)) return unavailable(`a path the policy hides could not be hidden: ${stderr.trim()}`, 'see `aalis doctor`; nothing was run');
    // the read-only step (`+ro`, root-map.helper.ts read_only_tree): the ids were mapped; running as the host's root is no way out of this
    if (stderr.split('\n').some((line) => line.startsWith(`${ROOT_MAP_FAILURE}${READ_ONLY_FAILURE}`))) return unavailable(`the root map step could not make the host's mounts read-only: ${stderr.trim()}`, 'see `aalis doctor`, or set `stepReadOnly: off` in the sandbox-linux config (AALIS_STEP_READ_ONLY=off for the CLI) to leave that to bubblewrap; nothing was run');
    return unavailable(`the command could not be mapped off the host's uid 0: ${stderr.trim()}`, "see `aalis doctor` (host-uid), or set `rootUidMap: off` in the sandbox-linux config to run commands as the host's root; nothing was run");
  }
  if (failure?.step === 'placeholders') {
    return unavailable(`the run's placeholders could not be made: ${failure.error.message}`, 'something appeared where the sandbox needed an empty name since the scan; run it again; nothing was run');
  }
  if (failure?.step === 'pid-limit') {
    return unavailable(`the sandbox's pid limit could not be applied: ${failure.error.message}`, failure.error instanceof PidLimitError ? failure.error.fix : 'see `aalis doctor`; nothing was run');
  }
  if (failure?.step === 'network') {
    const e = failure.error;
    if (stderr.startsWith('bwrap: ') && transientSetupFailure(stderr, translation, exists, mounted)) return new VanishedMountError(stderr.trim());
    // Refused the sandbox's namespaces (a bwrap that nests its user namespace before the sync
    // point would do that; see network.ts): a fresh sandbox may get them. Nothing ran yet.
    if (namespaceRefused(e.message)) return new VanishedMountError(e.message);
    const fix = e instanceof LoopbackFilterError ? e.fix : 'sudo apt-get install -y slirp4netns; see `aalis doctor`';
    return unavailable(`network "on" could not be set up: ${e.message}; bwrap: ${stderr.trim()}`, fix);
  }
  // a command that ran and printed "bwrap: ..." (a run again would run it again): its exit is the result
  if (state.kind !== 'killed' && end.exitCode === 1 && stderr.startsWith('bwrap: ') && end.commandRan !== true && commandNotRun(end.exitCode, stderr) === undefined) {
    if (end.setupDone !== true && transientSetupFailure(stderr, translation, exists, mounted)) return new VanishedMountError(stderr.trim());
    return unavailable(`bubblewrap could not set up the sandbox: ${stderr.trim()}`, 'see `aalis doctor`; nothing was run');
  }
  return undefined;
}
