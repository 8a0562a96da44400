import { readFileSync } from 'node:fs';
import type { SandboxCheck, SandboxProbe } from '@aalis/api-reach';
import { loadExeca } from './execa-lazy.js';
import { NAMESPACE_FLAGS, NETWORK_OFF_FLAGS, SECCOMP_FD } from './bwrap-flags.js';
import { findFilterTools, findSystemTool, INSTALL_NFT } from './loopback-filter.js';
import { findPython } from './system-interpreters.js';
import { choosePidLimit, PidLimitError } from './pid-limit.js';
import { findExecutable, userNamespaceFix } from './tools.js';
import { vanishedHostMount } from './vanished-mount.js';

/** The bubblewrap this package needs: `--disable-userns` and `--remount-ro` came in 0.8. */
export const MIN_BWRAP = [0, 8, 0] as const;

/** Binaries and the filter a probe checks. */
export interface ProbeTargets {
  readonly bwrap: string;
  readonly slirp4netns: string;
  /** nft, for the localPorts filter of network `on`. */
  readonly nft: string;
  readonly filter: Buffer;
  /** The pid limit runs will have (0: none). */
  readonly pidLimit: number;
  /** The daemon's effective uid; default this process's. */
  readonly uid?: number;
}

/** Names of the checks; `network` is needed only for policies with network `on`. */
export const CHECK_NAMES = ['bubblewrap', 'user-namespaces', 'seccomp', 'network', 'loopback-filter', 'unix-sockets', 'pid-limit', 'host-uid', 'tree-index', 'cpu-share'] as const;

/**
 * Checks whose failure leaves the sandbox working, only stricter than the policy, so they never
 * stop a run: without nft, network `on` closes the whole host loopback instead of the localPorts.
 * They still fail in `aalis doctor`, which prints their fix. `cpu-share` is added by the service
 * (cpu-share.ts): only the daemon's responsiveness depends on it.
 */
export const ADVISORY_CHECKS: readonly string[] = ['loopback-filter', 'host-uid', 'tree-index', 'cpu-share'];

/**
 * Said by `doctor` whenever the daemon is root: bubblewrap 0.8 maps the sandbox's uid to the
 * caller's, so commands run as the host's uid 0 (without capabilities, behind read-only kernel
 * knobs, but owning every root-owned file the policy lets them write). Measured reasons in the
 * README ("The command's host uid").
 */
export const HOST_ROOT_DETAIL =
  'the daemon runs as root, so sandboxed commands run as the host\'s uid 0: without capabilities, with /proc/sys and /sys read-only, but any root-owned file a writable root holds is theirs to change, and RLIMIT_NPROC does not apply to root (a pids cgroup limits them instead)';

const BASE = ['--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev'];

async function tryBwrap(bwrap: string, args: string[], filter?: Buffer): Promise<{ ok: boolean; message: string }> {
  // a host mount that went away during bwrap's setup is not a verdict on this machine (it would be cached as one)
  for (let attempt = 1; ; attempt++) {
    const r = await bwrapOnce(bwrap, args, filter);
    if (r.ok || attempt >= 5 || !vanishedHostMount(r.message)) return r;
  }
}

async function bwrapOnce(bwrap: string, args: string[], filter?: Buffer): Promise<{ ok: boolean; message: string }> {
  try {
    const execa = await loadExeca();
    const r = await execa(bwrap, args, {
      env: {},
      extendEnv: false,
      cwd: '/',
      reject: false,
      timeout: 10_000,
      stdio: filter ? ['ignore', 'pipe', 'pipe', new Uint8Array(filter)] : ['ignore', 'pipe', 'pipe'],
    });
    return { ok: r.exitCode === 0, message: String(r.stderr).trim() || `exit ${r.exitCode ?? r.signal}` };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

function versionOk(text: string): boolean {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (!m) return false;
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) {
    if (v[i]! !== MIN_BWRAP[i]) return v[i]! > MIN_BWRAP[i]!;
  }
  return true;
}

/**
 * Checks, in order, what a run needs: bubblewrap present and recent, user namespaces usable, the
 * project's seccomp filter loadable, slirp4netns for network `on`, nft for its localPorts filter
 * (advisory: without it the whole host loopback is closed), /proc/net/unix readable (the list of
 * sockets to hide). A failed check stops the ones that depend on it. Never throws.
 */
export async function probeHost(t: ProbeTargets): Promise<SandboxProbe> {
  const checks: SandboxCheck[] = [];
  const installBwrap = 'sudo apt-get install -y bubblewrap (0.8 or newer)';
  const bwrap = findExecutable(t.bwrap);
  let version = '';
  if (bwrap) {
    const execa = await loadExeca();
    const r = await execa(bwrap, ['--version'], { reject: false, timeout: 5000 }).catch(() => undefined);
    version = String(r?.stdout ?? '').trim();
  }
  if (!bwrap || !versionOk(version)) {
    checks.push({ name: 'bubblewrap', ok: false, detail: bwrap ? `${bwrap} is "${version}", need ${MIN_BWRAP.join('.')}` : `${t.bwrap} not found`, fix: installBwrap });
    return { backend: 'linux', available: false, checks };
  }
  checks.push({ name: 'bubblewrap', ok: true, detail: `${bwrap}: ${version}` });
  const ns = await tryBwrap(bwrap, [...NAMESPACE_FLAGS, ...NETWORK_OFF_FLAGS, ...BASE, '--', 'true']);
  if (!ns.ok) {
    checks.push({ name: 'user-namespaces', ok: false, detail: `bwrap cannot create its namespaces: ${ns.message}`, fix: userNamespaceFix() });
    return { backend: 'linux', available: false, checks };
  }
  checks.push({ name: 'user-namespaces', ok: true, detail: 'user, pid, net, ipc, uts namespaces; nested user namespaces disabled' });
  const sc = await tryBwrap(bwrap, [...NAMESPACE_FLAGS, ...BASE, '--seccomp', String(SECCOMP_FD), '--', 'true'], t.filter);
  checks.push(
    sc.ok
      ? { name: 'seccomp', ok: true, detail: `filter of ${t.filter.length / 8} instructions loads` }
      : { name: 'seccomp', ok: false, detail: `the seccomp filter does not load: ${sc.message}`, fix: 'use a kernel with CONFIG_SECCOMP_FILTER on x86_64 or aarch64' },
  );
  const slirp = findExecutable(t.slirp4netns);
  checks.push(
    slirp
      ? { name: 'network', ok: true, detail: `${slirp}: network "on" runs through it; the host loopback is at 10.0.2.2, minus the policy's localPorts` }
      : { name: 'network', ok: false, detail: `${t.slirp4netns} not found: policies with network "on" cannot run`, fix: 'sudo apt-get install -y slirp4netns' },
  );
  const nft = findFilterTools(t.nft);
  const nsenter = findSystemTool('nsenter');
  checks.push(
    nft
      ? { name: 'loopback-filter', ok: true, detail: `${nft.nft} (through ${nft.nsenter}): network "on" refuses only the policy's localPorts on the host` }
      : {
          name: 'loopback-filter',
          ok: false,
          detail: `${nsenter ? t.nft : 'nsenter'} not found: network "on" with localPorts closes the host loopback entirely (stricter than the policy: a dev server on the host is unreachable too)`,
          fix: nsenter ? INSTALL_NFT : 'sudo apt-get install -y util-linux',
        },
  );
  let unix = true;
  try {
    readFileSync('/proc/net/unix');
  } catch {
    unix = false;
  }
  checks.push(
    unix
      ? { name: 'unix-sockets', ok: true, detail: 'host sockets listed from /proc/net/unix and hidden unless under unixSockets' }
      : { name: 'unix-sockets', ok: false, detail: '/proc/net/unix is not readable: sockets outside unixSockets cannot be hidden', fix: 'mount /proc' },
  );
  const uid = t.uid ?? process.geteuid?.() ?? 0;
  checks.push(
    uid === 0
      ? { name: 'host-uid', ok: false, detail: HOST_ROOT_DETAIL, fix: 'run the daemon as an ordinary user (the owner of the workspace): the sandbox then runs as that uid' }
      : { name: 'host-uid', ok: true, detail: `sandboxed commands run as host uid ${uid}, never root` },
  );
  try {
    const m = choosePidLimit(t.pidLimit, uid);
    const how = m.kind === 'rlimit' ? 'RLIMIT_NPROC, counted in the sandbox\'s user namespace' : m.kind === 'cgroup' ? `a pids cgroup under ${m.base}` : '';
    checks.push(
      m.kind === 'none'
        ? { name: 'pid-limit', ok: true, detail: 'none: pidLimit is 0, so a sandboxed command can fork without limit' }
        : { name: 'pid-limit', ok: true, detail: `at most ${t.pidLimit} tasks per sandbox, through ${how}` },
    );
  } catch (e) {
    checks.push({ name: 'pid-limit', ok: false, detail: (e as Error).message, fix: e instanceof PidLimitError ? e.fix : 'see the README' });
  }
  checks.push(treeIndexCheck());
  const available = checks.every((c) => c.ok || c.name === 'network' || ADVISORY_CHECKS.includes(c.name));
  return { backend: 'linux', available, checks };
}

/**
 * Whether large trees can be indexed (tree-index.ts): python3 for the inotify helper, and room for
 * its watches. Advisory: without it every walk reads every directory, slower, as strict.
 */
function treeIndexCheck(): SandboxCheck {
  if (!findPython()) {
    return { name: 'tree-index', ok: false, detail: 'no python3 interpreter (a script in front of it, such as a version manager\'s shim, is not run as the daemon): large workspaces are walked whole before and after every command (slower, as strict)', fix: 'sudo apt-get install -y python3' };
  }
  let watches = '';
  try {
    watches = readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim();
  } catch {
    // no inotify: the helper says so at its start, and the walks go on without it
  }
  return { name: 'tree-index', ok: true, detail: `workspaces of 20,000 entries or more are watched through inotify (${watches || 'unknown'} watches per user; one per directory), so an unchanged tree is not walked again` };
}
