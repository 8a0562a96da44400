import type { Readable } from 'node:stream';
import type { SandboxPolicy } from '@aalis/api-reach';
import { type FilterTools, findFilterTools, hostAddresses, loopbackFilterRules } from './loopback-filter.js';
import { HELPER_EXIT_FD, HELPER_READY_FD, type StartNetHelper } from './net-helper.js';

/**
 * Network `on` without the host's network namespace: the sandbox keeps its own namespace (its
 * 127.0.0.1 is its own, so a test suite's servers work) and slirp4netns, a userspace TCP/IP
 * stack, gives it a tap device whose traffic leaves through ordinary sockets of the host. slirp's
 * gateway 10.0.2.2 is the host's 127.0.0.1, which the contract allows except for `localPorts`:
 * those are refused by nftables rules in the sandbox's namespace (loopback-filter.ts), put there
 * from the host before the command starts. Without nft, slirp4netns gets
 * `--disable-host-loopback` and the whole host loopback is closed (stricter, fail closed).
 * Abstract unix sockets are per network namespace, so the host's are out of reach either way.
 *
 * The handshake: bwrap reports the sandbox's pid on {@link INFO_FD}, then, setting up, blocks
 * reading {@link SETUP_SYNC_FD} until it is closed. While it waits the sandbox is still in its
 * first user namespace, the one that owns its network namespace, with its id maps written and
 * its loopback up; after setup, run unprivileged, bwrap moves it into a nested user namespace
 * (it maps the uid to 0 for `--dev`, then back), from which neither slirp4netns nor nsenter
 * could configure the network namespace. So slirp4netns and nft do their work inside that wait,
 * and nothing of the command has run yet.
 *
 * `--cap-drop ALL` (in NAMESPACE_FLAGS, for every run) matters here most: run by root, bwrap
 * would leave the command CAP_NET_ADMIN over its network namespace, with which it could delete
 * the localPorts rules. bwrap's `--disable-userns` is left out with network on: it moves the
 * sandbox into a nested user namespace during setup too. New user namespaces stay refused by the
 * seccomp filter (clone/unshare with CLONE_NEWUSER, clone3).
 */

/**
 * bwrap's `--json-status-fd`: `{ "child-pid": N ... }` once the sandbox exists, and
 * `{ "exit-code": N }` at the end only when the command was exec'd (exec-report.ts).
 */
export const INFO_FD = 4;
/** bwrap reads this fd to its end during setup (see {@link SETUP_SYNC_FLAGS}); closed once the host side is ready. */
export const SETUP_SYNC_FD = 5;
/**
 * Where bwrap writes what it read from {@link SETUP_SYNC_FD}: an empty file on its own setup
 * tmpfs, which the translation's `/` bind then covers, so the command never sees it.
 */
const SYNC_FILE = '/.aalis-setup-sync';

/**
 * Every run: bwrap reports the sandbox's pid, and waits at the start of its setup, before the
 * first mount, until {@link SETUP_SYNC_FD} is closed. Meanwhile the host side makes the run's
 * placeholders (their mkdirs overlap bwrap's start) and, with network `on`, sets up the network.
 * They must come before the translation, whose first mount is `/`.
 */
export const SETUP_SYNC_FLAGS = ['--json-status-fd', String(INFO_FD), '--file', String(SETUP_SYNC_FD), SYNC_FILE] as const;

/**
 * Network `on` run by root, with no placeholders to make: bwrap does its whole setup (mounts, pivot
 * into the new root, the capability drop) and then waits reading {@link SETUP_SYNC_FD}
 * (`--block-fd`), before it forks the command and loads the seccomp filter. The network's set-up
 * overlaps bwrap's mounts instead of coming before them. Only where bwrap does not nest a second
 * user namespace during setup, which it does when the sandbox's uid is not the one it maps to 0
 * for `--dev`, i.e. when run unprivileged: as root the sandbox is still, at that wait, in the user
 * namespace that owns its network namespace, so slirp4netns and the filter join the same ones as
 * at the setup's start. Releasing is the same close of the fd; nothing of the command runs before.
 */
export const EXEC_SYNC_FLAGS = ['--json-status-fd', String(INFO_FD), '--block-fd', String(SETUP_SYNC_FD)] as const;

/**
 * Whether a run waits just before its command ({@link EXEC_SYNC_FLAGS}) rather than at the start
 * of bwrap's setup: network `on`, bwrap started by root (`daemonUid` 0), and no placeholders,
 * which must exist before bwrap's first mount.
 */
export function syncAtExec(network: 'on' | 'off', daemonUid: number | undefined, placeholders: number): boolean {
  return network === 'on' && daemonUid === 0 && placeholders === 0;
}

/** How network `on` is set up for one policy. */
export interface NetworkPlan {
  /** slirp4netns maps its gateway to the host's 127.0.0.1 (no `--disable-host-loopback`). */
  readonly hostLoopback: boolean;
  /** The localPorts filter to install before the command runs; absent when nothing is filtered. */
  readonly filter?: { readonly tools: FilterTools; readonly rules: string };
}

/**
 * No `localPorts`: nothing to refuse, so the host loopback is open and nft is not needed. With
 * `localPorts` and nft (and nsenter) found: the loopback is open and the filter refuses those
 * ports. Without nft: the whole host loopback is closed, which refuses the localPorts and more.
 * `nft` is the `nft` option of LinuxSandboxOptions; the host's addresses are read now, per run.
 */
export function planNetwork(policy: Pick<SandboxPolicy, 'localPorts'>, nft: string): NetworkPlan {
  if (policy.localPorts.length === 0) return { hostLoopback: true };
  const tools = findFilterTools(nft);
  if (!tools) return { hostLoopback: false };
  return { hostLoopback: true, filter: { tools, rules: loopbackFilterRules(policy.localPorts, hostAddresses()) } };
}

/**
 * slirp4netns or nsenter refused the sandbox's namespaces. Nothing has run (the sandbox is still
 * in its setup), so a fresh sandbox may be tried; see `spawn()` in service.ts.
 */
export function namespaceRefused(message: string): boolean {
  return /setns\(CLONE_NEWNET\): Operation not permitted|reassociate to namespace '[a-z/]+' failed: Operation not permitted/.test(message);
}

/** A running slirp4netns for one sandbox. */
export interface Slirp {
  stop(): Promise<void>;
}

/** Reads bwrap's info fd until the child pid is known. */
export function readChildPid(info: Readable, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(new Error('bubblewrap did not report the sandbox pid')), timeoutMs);
    const onData = (d: Buffer) => {
      text += d.toString();
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) done(undefined, Number(m[1]));
    };
    const onEnd = () => done(new Error(`bubblewrap ended before reporting the sandbox pid: ${text.trim()}`));
    function done(err?: Error, pid?: number) {
      clearTimeout(timer);
      info.off('data', onData);
      info.off('end', onEnd);
      info.off('close', onEnd);
      if (err) reject(err);
      else resolve(pid!);
    }
    info.on('data', onData);
    info.on('end', onEnd);
    info.on('close', onEnd);
  });
}

/**
 * Starts slirp4netns for the sandbox whose pid-1 is `pid`, by `start` (the launcher where the run
 * has one: net-helper.ts), and waits until its device is configured: slirp4netns writes its
 * `--ready-fd`, nothing is polled. `hostLoopback` false adds `--disable-host-loopback` (see
 * {@link planNetwork}). `name` names the attempt (its FIFO folder under the launcher).
 */
export async function startSlirp(start: StartNetHelper, name: string, slirp4netns: string, pid: number, hostLoopback: boolean, timeoutMs = 5000): Promise<Slirp> {
  const proc = await start(name, [
    slirp4netns,
    '--configure',
    '--mtu=65520',
    ...(hostLoopback ? [] : ['--disable-host-loopback']),
    `--ready-fd=${HELPER_READY_FD}`,
    `--exit-fd=${HELPER_EXIT_FD}`,
    // the user namespace that owns the sandbox's network namespace, while bwrap waits in setup
    `--userns-path=/proc/${pid}/ns/user`,
    String(pid),
    'tap0',
  ]);
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const stop = async () => {
    proc.closeExit();
    proc.kill();
    await proc.ended;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('slirp4netns did not become ready')), timeoutMs);
      proc.ready.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
      void proc.ended.then((r) => {
        clearTimeout(timer);
        reject(new Error(`slirp4netns exited (${r.lost ?? r.exitCode ?? r.signal}): ${stderr.trim()}`));
      });
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { stop };
}
