import { landingLinkCandidates } from './landing-links.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import {
  aalisStateDir,
  BoundedOutput,
  feedStdin,
  type KeptCommit,
  type MovedAside,
  movedAsideSummary,
  PLAN_RUN_DIR,
  type PlanStep,
  refusedWritesIn,
  type SandboxPlan,
  type SandboxPolicy,
  type SandboxProbe,
  type SandboxRunRequest,
  type SandboxRunResult,
  type SandboxService,
  SandboxUnavailableError,
  type StdinFeed,
} from '@aalis/api-reach';
import { loadExeca } from './execa-lazy.js';
import { AalisError, hasRawBytes, printablePath } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';
import { kernelSurface } from './kernel-surface.js';
import { CgroupLead } from './cgroup-lead.js';
import { type CpuShare, type CpuShareSetting, cpuShareCheck, openCpuShare } from './cpu-share.js';
import { choosePidLimit, DEFAULT_PID_LIMIT, PidLimitError, type PidLimitMechanism, preparePidLimit, type RunPidLimit, sweepStalePidCgroups } from './pid-limit.js';
import { type FilterRoute, installLoopbackFilter, NFT_LIBRARY } from './loopback-filter.js';
import { forkNetHelper, launcherFilter, launcherNetHelper, type StartNetHelper } from './net-helper.js';
import { INFO_FD, planNetwork, readChildPid, SETUP_SYNC_FD, type Slirp, startSlirp, syncAtExec } from './network.js';
import { ADVISORY_CHECKS, probeHost } from './probe.js';
import { hostFingerprint, loadCachedProbe, overlayFingerprint, type ProbeCacheOptions, storeProbe } from './probe-cache.js';
import { checkRunRequest } from './request.js';
import { livePlaceholders, RunDir, sweepStaleRunDirs } from './run-dir.js';
import { type HostFacts, type ScanOptions, scanHost } from './scan.js';
import { LandingSweeper } from './landing-sweeper.js';
import { linuxRefusal } from './refusal-test.js';
import { type HostMemory, HostThread, type HostWalks } from './host-thread.js';
import { DaemonTmpVisibleError, hideDaemonTmp } from './daemon-tmp.js';
import { type HostModel, overlayRootsOf, planOverlays, probeOverlay, seedOverlayProbe, socketBinds } from './overlay-mount.js';
import { chooseModel, HOST_MODEL_CHECK, hostModelCheck, type ModelChoice, OverlayRequiredError, overlayLaunch, RunOverlays } from './overlay-run.js';
import { factsForMappedRoot } from './socket-reach.js';
import { HOST_UID_CHECK, type IdRange, planRootMap, probeRootMap, rootMapStep, type RootUidMap, userOverlayStep } from './root-map.js';
import { isWithin } from './rule-match.js';
import { buildSeccompFilter } from './seccomp.js';
import { DEFAULT_KEPT_WRITES_MS, KeptWritesStore } from './kept-writes.js';
import { findExecutable } from './tools.js';
import { type Translation, translatePolicy } from './translate.js';
import { ARGS_FD, type LinuxRunPlan, linuxPlan, tmpEnv } from './run-plan.js';
import { ENV_FD } from './launch-env.js';
import { LAUNCHER_REPLY_MS, type LaunchedRun, type LauncherExit, Launcher } from './launcher.js';
import { ROOT_MAP_PY, USER_STEP_PY } from './root-map.helper.js';
import { rootsReceiving, syncFileSystems } from './committed-sync.js';
import { isPlainEntry, premountHides, readOnlyByStep, realOr } from './premount.js';
import { DEFAULT_PREPARED_IDLE_MS, DEFAULT_PREPARED_PER_KEY, type PreparedSandbox, PreparedPool, identityPaths, preparedKey, preparedStep, samePlan, shimFailure, shimPayload, shimRequest } from './prepared.js';
import { watchExec } from './exec-report.js';
import { killPinned, type PinnedPid, pinPid } from './pinned-pid.js';
import { commandNotRun, type Killer, killed, type LaunchState, launchFailure, released, sandboxKnown, type SetupFailure, VanishedMountError } from './launch-state.js';
import { endWithin, type ForcedEnd, forcedEndLine, type SandboxRemains } from './bounded-end.js';
import { findPerl, findPython } from './system-interpreters.js';

/** How the Linux sandbox is set up. */
export interface LinuxSandboxOptions {
  /**
   * bubblewrap: a name looked up on the daemon's PATH, or an absolute path. Default `bwrap`. A root
   * daemon's overlay runs start it from the root map's step, where the host is read-only but for the
   * writable roots (see {@link stepReadOnly}): a wrapper script put here cannot write on the host.
   */
  readonly bwrap?: string;
  /** slirp4netns, for network `on`. Default `slirp4netns`. */
  readonly slirp4netns?: string;
  /**
   * nft (nftables), with which network `on` refuses just the policy's `localPorts` on the host.
   * Default `nft` on PATH, then in /usr/sbin and /sbin. Where it is missing, network `on` closes
   * the whole host loopback instead (stricter); a path that does not exist shows that.
   */
  readonly nft?: string;
  /**
   * The libnftables a root daemon's kept-alive launcher loads to put the localPorts filter in
   * place without starting nsenter and nft (a name the dynamic loader finds, or a path); used only
   * while {@link nft} is not set (a configured nft is always the program run). Default
   * `libnftables.so.1`, the library nft itself uses. Where it cannot be loaded, runs with
   * `localPorts` fail closed.
   */
  readonly nftLibrary?: string;
  /** Where per-run folders go. Default the OS temp directory. */
  readonly tmpDir?: string;
  /** Limits of the walk for pattern rules. */
  readonly scan?: ScanOptions;
  /** The seccomp program handed to bwrap; default {@link buildSeccompFilter}. For tests of a filter that does not load. */
  readonly seccompFilter?: Buffer;
  /** Where a good probe is kept for later processes (see `probe-cache.ts`); without it each process probes once. */
  readonly probeCache?: ProbeCacheOptions;
  /** Create write roots that do not exist yet (a toolchain cache never used). Default true. */
  readonly createMissingWriteRoots?: boolean;
  /**
   * How often a running command's writable roots are looked at for new entries a deny layer covers
   * (removed then, not only after the run); 0 looks only after the run. Default {@link DEFAULT_LANDING_SWEEP_MS}.
   */
  readonly landingSweepMs?: number;
  /**
   * Where new entries a deny layer covers go when a look takes them away (a folder per run, their
   * whole path under it): moved, not deleted, since a host program may have made them during the
   * run. Default `$XDG_STATE_HOME/aalis/undone` (`~/.local/state/aalis/undone`).
   */
  readonly undoneDir?: string;
  /**
   * Most tasks (processes and threads) one sandbox may have; a fork beyond fails with EAGAIN.
   * Default {@link DEFAULT_PID_LIMIT}; 0 runs without a limit. Enforced by RLIMIT_NPROC when the
   * daemon is an ordinary user, by a pids cgroup when it is root (pid-limit.ts); where neither
   * works every run fails closed.
   */
  readonly pidLimit?: number;
  /**
   * How the command's writes are kept from the host until judged (overlay-mount.ts): `auto`
   * (default) captures them in an overlay per writable root where this kernel mounts one, else
   * falls back to the look; `overlay` requires it (runs fail closed without); `look` never uses it.
   */
  readonly hostModel?: HostModel;
  /** util-linux's unshare, for the overlay's mount step. Default `unshare` on PATH. */
  readonly unshare?: string;
  /**
   * Where the scan and the looks for landings run: `thread` (default) on a worker thread, so a
   * daemon keeps answering during a walk of a large tree; `inline` on the calling thread, for a
   * one-shot process (`aalis exec`) that would only pay the thread's start-up.
   */
  readonly hostWalks?: HostWalks;
  /** How long a run's refused writes kept for an answer (`keepRefused`) wait before they are discarded. Default {@link DEFAULT_KEPT_WRITES_MS}. */
  readonly keptWritesMs?: number;
  /**
   * Run by root: `on` (default) runs commands as uid 0 of a user namespace mapped to an unused
   * host id range over idmapped mounts (root-map.ts), failing closed where that cannot be made;
   * `off` runs them as the host's uid 0, as before. No effect for an ordinary user's daemon.
   */
  readonly rootUidMap?: RootUidMap;
  /** python3, which makes the idmapped mounts of {@link rootUidMap}. Default `python3` on the daemon's PATH. */
  readonly python?: string;
  /** coreutils `sync`, which writes what a run committed out to the disk before its result (committed-sync.ts). Default `sync` on the daemon's PATH. */
  readonly sync?: string;
  /**
   * Runs start from one kept-alive python launcher (launcher.ts) rather than a fork of the daemon:
   * `on` (default) a root daemon's mapped runs, so the daemon never forks per run; `all` an
   * ordinary user's runs too, whose overlays the launcher's child then mounts itself (`user_step`,
   * root-map.helper.ts) rather than unshare(1), a shell and one mount(8) per writable root (a
   * daemon's setting: the python start pays back over many runs); `off` forks the per-run chain, as
   * before. Where no system python is found, the per-run chain. An ordinary user's network helpers
   * are started as before, by a fork of the daemon.
   */
  readonly launcher?: LauncherSetting;
  /**
   * Sandboxes prepared ahead (prepared.ts): `on` starts the next sandbox of a policy (and cwd) in
   * the background after each of its runs, so the next run pays only the check, the release, the
   * command and the commit; `off` (the default) never. Only runs through the launcher with the
   * overlay model and network off are prepared. A daemon's setting: a one-shot process would only
   * pay for a sandbox it never uses. Nothing is prepared while another run is setting up (not yet
   * released to its command): a prepared run costs more CPU than a cold one (its release scans,
   * translates and compares again), and with runs competing for the cores the speculative work
   * only took theirs. A long command (a dev server in the background) is released: it does not stop it.
   */
  readonly prepare?: PrepareSetting;
  /** How long a prepared sandbox waits for its run before it is discarded. Default {@link DEFAULT_PREPARED_IDLE_MS}. */
  readonly preparedIdleMs?: number;
  /** Prepared sandboxes held or under way per policy and cwd (1 to prepared.ts `MAX_PREPARED`). Default {@link DEFAULT_PREPARED_PER_KEY}. */
  readonly preparedPerKey?: number;
  /**
   * Runs of a policy (and cwd), each within {@link preparedIdleMs} of the one before, before its
   * next sandbox is prepared: 1 (default) from its first run. A daemon of many conversations sets
   * 2: one that makes a single call would otherwise hold sandboxes it never uses, and with them
   * the pool's places (8 in all) for their idle time, while the conversations that do call again
   * ran cold (the daemon benchmark: a few dozen new conversations, then no gain from preparing).
   */
  readonly preparedFrom?: number;
  /**
   * `on`: a root daemon's sandboxes share one cgroup of the v1 cpu controller weighted as one session
   * (cpu-share.ts), so together they weigh as much as the daemon's thread, not as much each (every
   * `bwrap --new-session` is otherwise its own autogroup). Not a security promise:
   * where the cgroup cannot be made, runs go at normal priority and `aalis doctor` says why.
   * `off` (the default): a library or one-shot run leaves the scheduler alone.
   */
  readonly cpuShare?: CpuShareSetting;
  /**
   * A root daemon's cold runs move their sandbox into their pids cgroup once bwrap has started, and
   * that move waits for the kernel (an RCU grace period, 5–9 ms here). `on` (the default) starts
   * that wait when the run starts, through a parked shell of the daemon's that moves itself within
   * a cgroup of its own (cgroup-lead.ts); `off` does without it (no extra process; each cold run
   * waits). Only speed depends on it: the limit is applied the same either way.
   */
  readonly cgroupLead?: 'on' | 'off';
  /**
   * A root daemon's hidden files and directories: `on` (the default) has the root map's step mount
   * those it can in bwrap's place (premount.ts), sparing bwrap a read of the whole mount table per
   * entry; `off` leaves every one to bwrap (for comparing). The view inside is the same either way.
   */
  readonly premount?: 'on' | 'off';
  /**
   * A root daemon's overlay runs: `on` (the default) has the root map's step make every host mount
   * read-only itself, with one recursive mount_setattr (premount.ts `readOnlyByStep`), so bwrap
   * binds / as it is instead of remounting each mount read-only and binding each writable root back
   * over itself; `off` leaves that to bwrap (for comparing; also off with `premount: off`). The view
   * inside is the same either way.
   */
  readonly stepReadOnly?: 'on' | 'off';
  /**
   * Where the service says what it had to do on its own that a log should show: a sandbox that did
   * not end within its bound after its kill, and what was killed to end it (bounded-end.ts). A
   * daemon logs these lines; default: none kept.
   */
  readonly onWarning?: (line: string) => void;
  /**
   * `true`: the launcher's python (see {@link launcher}) is started as soon as the first probe
   * answers, not at the first run, so its start overlaps what comes before the run instead of
   * being waited for after the scan. For a process about to run a command (`aalis exec`); it only
   * starts the interpreter, which runs nothing until a run asks. Default `false`.
   */
  readonly warmLauncher?: boolean;
}

/** The {@link LinuxSandboxOptions.prepare} settings. */
export const PREPARE_SETTINGS = ['on', 'off'] as const;
/** One of {@link PREPARE_SETTINGS}. */
export type PrepareSetting = (typeof PREPARE_SETTINGS)[number];

/** A prepared sandbox's run started: its shim waits on stdin for the command (prepared.ts). */
type Warm = PreparedSandbox<Started>;

/** A prepared sandbox did not match the run at release: it was discarded, and the run goes cold. */
class ColdAgain extends AalisError<LinuxErrorCode> {
  constructor(message: string) {
    super('prepared-cold', message);
  }
}

/** The {@link LinuxSandboxOptions.launcher} settings. */
export const LAUNCHER_SETTINGS = ['on', 'all', 'off'] as const;
/** One of {@link LAUNCHER_SETTINGS}. */
export type LauncherSetting = (typeof LAUNCHER_SETTINGS)[number];

/** What a run needs on top of bubblewrap. */
interface RunTools {
  readonly bwrap: string;
  readonly slirp?: string;
  /** Set when a root daemon's command is mapped off the host's uid 0. */
  readonly rootMap?: { readonly python: string; readonly range: IdRange };
}

/** The default {@link LinuxSandboxOptions.undoneDir}. */
export function defaultUndoneDir(env: NodeJS.ProcessEnv = process.env): string {
  // in the state folder the reach lists make control plane and hidden from every command
  return join(aalisStateDir(env, homedir()), 'undone');
}

/** The least pause between two looks for new landings while a command runs. */
export const DEFAULT_LANDING_SWEEP_MS = 2000;

/** Bytes kept of each of stdout and stderr when the request gives no limit. */
export const DEFAULT_MAX_OUTPUT = 1024 * 1024;

/** How often a running service looks for run folders of dead daemons (it also does at start). */
const SWEEP_INTERVAL_MS = 60_000;

/** Setup attempts when a mount point vanished under us. */
const MAX_SETUP_ATTEMPTS = 5;

const unavailable = (reason: string, fix: string) => new SandboxUnavailableError('linux', reason, fix);

/** The sandbox service on Linux: bubblewrap with a generated seccomp filter. */
export class LinuxSandbox implements SandboxService {
  readonly backend = 'linux' as const;
  private readonly filter: Buffer;
  private readonly tmp: string;
  private readonly undoneDir: string;
  private ready?: Promise<SandboxProbe>;
  private pids?: PidLimitMechanism;
  /** The sandboxes' CPU cgroup, made at the first run when {@link LinuxSandboxOptions.cpuShare} is on; removed by {@link close}. */
  private cpu?: CpuShare;
  /** Starts a cold run's cgroup move's wait at its start (cgroup-lead.ts), where the pid limit is a cgroup; or why not. */
  private lead?: CgroupLead | { readonly off: string };
  /** The scan and the looks for landings, off the event loop. */
  private readonly host: HostThread;
  private sweptAt = 0;
  /** Set by {@link close}: nothing more is prepared. */
  private closing = false;
  /** Run folders of dead daemons that held writes never judged (swept, never committed): said on the next run. */
  private unjudged: string[] = [];
  /** Runs' refused writes waiting in their upper layers for an answer (kept-writes.ts). */
  private readonly kept: KeptWritesStore;
  /** Runs' tear-downs their results did not wait for (the layers' removal, the run folder's), awaited by {@link close}. */
  private readonly tearDowns = new Set<Promise<void>>();
  /** The kept-alive launcher (started at the first run that goes through it: see {@link LinuxSandboxOptions.launcher}). */
  private launcher?: Launcher;
  /** An ordinary user's launcher's interpreter (`launcher: all`), once looked up; null: none found. */
  private userPython?: string | null;
  /** Sandboxes prepared ahead, by policy and cwd (prepared.ts). */
  private readonly prepared: PreparedPool<Started>;
  /** Counts of prepared sandboxes, for tests and the benchmark. */
  private readonly counts = { prepared: 0, used: 0, discarded: 0 };
  /** Each policy's (and cwd's) latest run and how many ran before it, each within the idle time of the next (see {@link LinuxSandboxOptions.preparedFrom}). */
  private readonly runsOf = new Map<string, { readonly last: number; readonly streak: number }>();
  /** Runs of this service setting up: started, their command not yet released (see {@link LinuxSandboxOptions.prepare}). */
  private settingUp = 0;
  /** Preparations under way, awaited by {@link close}. */
  private readonly preparing = new Set<Promise<void>>();
  /** Preparations waiting for their sandbox to be ready: {@link close} ends those waits at once. */
  private readonly readyWaits = new Set<() => void>();

  constructor(private readonly options: LinuxSandboxOptions = {}) {
    this.prepared = new PreparedPool(options.preparedIdleMs ?? DEFAULT_PREPARED_IDLE_MS, (p) => this.discardPrepared(p), options.preparedPerKey ?? DEFAULT_PREPARED_PER_KEY);
    this.host = new HostThread(options.hostWalks);
    this.filter = options.seccompFilter ?? buildSeccompFilter();
    this.tmp = options.tmpDir ?? tmpdir();
    this.undoneDir = options.undoneDir ?? defaultUndoneDir();
    this.kept = new KeptWritesStore(options.keptWritesMs ?? DEFAULT_KEPT_WRITES_MS);
    sweepStaleRunDirs(this.tmp, (d, partial, left) => this.unjudged.push(partial ? `${d}: partially committed${left.length > 0 ? ` (left on the host: ${left.join(', ')})` : ''}, cut off midway` : d));
    try {
      sweepStalePidCgroups(choosePidLimit(this.pidLimit));
    } catch {
      // no pid limit here: the first run says why and fails closed
    }
    this.sweptAt = Date.now();
  }

  private get hostModel(): HostModel {
    return this.options.hostModel ?? 'auto';
  }

  private get rootUidMap(): RootUidMap {
    return this.options.rootUidMap ?? 'on';
  }

  private get pidLimit(): number {
    return this.options.pidLimit ?? DEFAULT_PID_LIMIT;
  }

  /**
   * What works here, for `aalis doctor` and before runs: probed once per process (again only
   * after a probe that found something missing), and not at all while `probeCache` holds a
   * fresh good probe for the same host fingerprint (see `probe-cache.ts`).
   */
  async probe(): Promise<SandboxProbe> {
    if (!this.ready) {
      this.ready = this.probeOnce();
      if (this.options.warmLauncher) void this.ready.then((p) => this.warmLauncher(p));
    }
    const probe = await this.ready;
    if (!probe.available) this.ready = undefined; // look again next time: it may have been fixed
    // the cpu share is this process's setting and state, never cached with the host's facts
    return { ...probe, checks: [...probe.checks, cpuShareCheck(this.options.cpuShare ?? 'off', this.cpu)] };
  }

  private async probeOnce(): Promise<SandboxProbe> {
    try {
      const targets = {
        bwrap: this.options.bwrap ?? 'bwrap',
        slirp4netns: this.options.slirp4netns ?? 'slirp4netns',
        nft: this.options.nft ?? 'nft',
        filter: this.filter,
        pidLimit: this.pidLimit,
      };
      const cache = this.options.probeCache;
      const overlay = this.hostModel !== 'look';
      // the host model is a setting, not a fact of the host: part of the key; so is what the overlay probe depends on
      const key = cache ? `${hostFingerprint(targets)}:${overlay ? overlayFingerprint(this.tmp, this.options.unshare) : '-'}:${this.hostModel}:${this.rootUidMap}` : '';
      const cached = cache ? await loadCachedProbe(cache, key, Date.now()) : undefined;
      if (cached) {
        // the runs' overlay probe gets the cached answer too: none is mounted while the cache is fresh
        if (cached.overlay) seedOverlayProbe(this.tmp, this.options.unshare, cached.overlay);
        return cached.probe;
      }
      const base = await probeHost(targets);
      const model = await hostModelCheck(this.hostModel, this.tmp, this.options.unshare);
      // under hostModel overlay, every run without it fails closed: the backend does not work here
      const available = base.available && (model.ok || this.hostModel !== 'overlay');
      // the host's uid as runs will really have it (mapped, or why not), in place of the plain fact
      const hostUid = await probeRootMap(this.rootUidMap, process.geteuid?.() ?? 0, this.options.python);
      const probe = { ...base, available, checks: [...base.checks.map((c) => (c.name === HOST_UID_CHECK ? hostUid : c)), model] };
      if (cache) await storeProbe(cache, key, probe, Date.now(), overlay ? await probeOverlay(this.tmp, this.options.unshare) : undefined);
      return probe;
    } catch (e) {
      return { backend: 'linux', available: false, checks: [{ name: 'probe', ok: false, detail: (e as Error).message }] };
    }
  }

  private async requireReady(policy: SandboxPolicy): Promise<RunTools> {
    const probe = await this.probe();
    const failed = probe.checks.find((c) => !c.ok && !ADVISORY_CHECKS.includes(c.name) && c.name !== HOST_MODEL_CHECK && (c.name !== 'network' || policy.network === 'on'));
    if (failed) throw unavailable(`${failed.name}: ${failed.detail}`, failed.fix ?? 'see `aalis doctor`');
    const rootMap = this.requireRootMap(probe);
    if (!this.pids) {
      try {
        this.pids = choosePidLimit(this.pidLimit);
      } catch (e) {
        throw unavailable(`pid limit: ${(e as Error).message}`, e instanceof PidLimitError ? e.fix : 'see `aalis doctor`');
      }
      sweepStalePidCgroups(this.pids);
    }
    if (this.options.cpuShare === 'on' && !this.cpu && !this.closing) {
      this.cpu = openCpuShare();
      // a launcher started before (warmLauncher) joins now; one started later joins at its start
      if (this.launcher?.pid !== undefined) this.cpu.adopt(this.launcher.pid);
    }
    if (!this.lead && this.pids.kind === 'cgroup' && !this.closing) {
      this.lead = this.options.cgroupLead === 'off' ? { off: 'cgroupLead is off' } : CgroupLead.open(this.pids.base);
      if (this.lead instanceof CgroupLead && this.lead.pid !== undefined) this.cpu?.adopt(this.lead.pid);
    }
    const bwrap = findExecutable(this.options.bwrap ?? 'bwrap');
    if (!bwrap) throw unavailable('bubblewrap is gone', 'sudo apt-get install -y bubblewrap');
    if (policy.network !== 'on') return { bwrap, ...rootMap };
    const slirp = findExecutable(this.options.slirp4netns ?? 'slirp4netns');
    if (!slirp) throw unavailable('slirp4netns is gone', 'sudo apt-get install -y slirp4netns');
    return { bwrap, slirp, ...rootMap };
  }

  /**
   * {@link LinuxSandboxOptions.warmLauncher}: the launcher started once the probe says a mapped run
   * can go through it. Nothing is decided here: each run checks its tools again (requireReady) and
   * fails closed as before; a launcher that cannot start makes that run's launch fail, not this.
   */
  private warmLauncher(probe: SandboxProbe): void {
    if (!probe.available || this.closing) return;
    let tools: Pick<RunTools, 'rootMap'>;
    try {
      tools = this.requireRootMap(probe);
    } catch {
      return; // the run says why, and runs nothing
    }
    this.launcherFor(tools)?.warm(tools.rootMap?.range);
  }

  /** Run by root with rootUidMap on: the mapping's interpreter and range; where the probe found it impossible, nothing runs. */
  private requireRootMap(probe: SandboxProbe): Pick<RunTools, 'rootMap'> {
    if ((process.geteuid?.() ?? 0) !== 0 || this.rootUidMap === 'off') return {};
    const check = probe.checks.find((c) => c.name === HOST_UID_CHECK);
    if (!check?.ok) throw unavailable(`${HOST_UID_CHECK}: ${check?.detail ?? 'not probed'}`, check?.fix ?? 'see `aalis doctor`');
    const plan = planRootMap(this.options.python);
    if (!plan.ok) throw unavailable(`${HOST_UID_CHECK}: ${plan.detail}`, plan.fix);
    return { rootMap: { python: plan.python, range: plan.range } };
  }

  /** This service's CPU cgroup (cpu-share.ts) once its first run made it; undefined before, without one, and after {@link close}. */
  cpuShareDir(): string | undefined {
    return this.cpu?.where.kind === 'cgroup' ? this.cpu.where.dir : undefined;
  }

  /** How many sandboxes were prepared ahead, used by a run, and discarded unused (changed at release, idle, closed), since the start. */
  preparedCounts(): { readonly prepared: number; readonly used: number; readonly discarded: number } {
    return { ...this.counts };
  }

  /** Resolves once no sandbox is being prepared (each preparation ready or failed); for tests and the benchmark. */
  async preparationsSettled(): Promise<void> {
    await Promise.all(this.preparing);
  }

  /** What the host model (the scan's and the looks' kept listings, on the host thread) holds in memory now; for the benchmark. */
  hostMemory(): Promise<HostMemory> {
    return this.host.run({ op: 'memory' });
  }

  /** Commits a run's kept refused writes, judged under `policy` (kept-writes.ts); the rest of them is discarded. */
  async commitKept(id: string, policy: SandboxPolicy, paths: readonly string[]): Promise<KeptCommit> {
    const kept = await this.kept.commit(id, policy, paths, (job) => this.host.run({ op: 'commit', ...job }));
    const unsynced = await this.syncCommitted(policy, kept.committed);
    return unsynced ? { ...kept, notes: kept.notes + unsynced } : kept;
  }

  /**
   * The file systems that received a commit, synced before the result (committed-sync.ts: the
   * overlays are `volatile`); a line for stderr when one could not be, '' otherwise.
   */
  private async syncCommitted(policy: SandboxPolicy, committed: readonly string[]): Promise<string> {
    const roots = committed.length === 0 ? [] : rootsReceiving(policy.write, committed);
    if (roots.length === 0) return '';
    // not on a host lane: one run's slow sync would hold up every other run's result behind it
    return await syncFileSystems(roots, findExecutable(this.options.sync ?? 'sync')).catch((e: Error) => `aalis: the writes committed under ${roots.join(', ')} were not synced to the disk (${e.message}): they reach it with the kernel's writeback\n`);
  }

  /** Discards a run's kept refused writes. */
  async discardKept(id: string): Promise<void> {
    this.kept.discard(id);
  }

  /** Discards every kept write and stops the host walk thread (the daemon or session is ending; the kernel calls it through `sandboxPlugin`). */
  async close(): Promise<void> {
    this.kept.discardAll();
    this.closing = true;
    for (const stop of this.readyWaits) stop(); // a sandbox being prepared is not waited for (up to 15 s): it is discarded
    await Promise.all(this.preparing);
    await this.prepared.close();
    await Promise.all(this.tearDowns);
    // the launcher and the lead first: they sit in the CPU cgroup, which is removed once empty
    const launcher = this.launcher;
    this.launcher = undefined;
    await launcher?.close();
    if (this.lead instanceof CgroupLead) await this.lead.close();
    await this.cpu?.close();
    this.cpu = undefined;
    await this.host.close();
  }

  /** Translates without running: the bwrap mount arguments for a policy as seen from `cwd` now. */
  translate(policy: SandboxPolicy, cwd: string, emptyFile = '/nonexistent/empty'): Translation {
    return translatePolicy(policy, scanHost(policy, cwd, this.options.scan, livePlaceholders()), { cwd, emptyFile, kernel: kernelSurface() });
  }

  /**
   * What {@link run} would execute for `request` now: the same checks, scan, translation, host
   * model and argv, built by the same code, with nothing made and nothing run. Paths in the run's
   * own scratch directory read `PLAN_RUN_DIR`.
   */
  /**
   * The host as this run's command meets it: the scan (off the event loop), and for a root-mapped
   * command without the host sockets it cannot reach (socket-reach.ts).
   */
  private async scanFor(policy: SandboxPolicy, cwd: string, tools: Pick<RunTools, 'rootMap'>): Promise<HostFacts> {
    const facts = await this.host.run({ op: 'scan', policy, cwd, options: this.options.scan, skip: [...livePlaceholders()] });
    return tools.rootMap ? factsForMappedRoot(facts) : facts;
  }

  async plan(input: SandboxRunRequest): Promise<SandboxPlan> {
    const request = checkRunRequest(input);
    const { policy } = request;
    const tools = await this.requireReady(policy);
    const model = await this.modelFor(policy);
    const dir = { path: PLAN_RUN_DIR, emptyFile: join(PLAN_RUN_DIR, 'empty'), emptyDir: join(PLAN_RUN_DIR, 'void') };
    let translation: Translation;
    let facts: HostFacts;
    try {
      facts = await this.scanFor(policy, request.cwd, tools);
      translation = translatePolicy(policy, facts, { cwd: request.cwd, emptyFile: dir.emptyFile, emptyDir: dir.emptyDir, kernel: kernelSurface(), placeholders: model.kind !== 'overlay' });
    } catch (e) {
      throw unavailable(`the policy cannot be enforced here: ${(e as Error).message}`, 'check the policy (real absolute paths, patterns in the contract subset) and that its roots are scannable');
    }
    if (model.kind === 'look') return this.runPlan(request, translation, tools, model).plan;
    const overlays = planOverlays(overlayRootsOf(policy), join(dir.path, 'overlay'));
    const binds = socketBinds(overlays, facts.sockets.filter((p) => !hasRawBytes(p)));
    const hideArgs = hideDaemonTmp(this.tmp, translation.tmp, policy, request.cwd);
    const wrap = (bwrap: string, args: readonly string[], rootMap?: (mounts: readonly string[]) => string[]) => overlayLaunch(model.tools, overlays, binds, bwrap, args, rootMap);
    const plan = this.runPlan(request, translation, tools, model, hideArgs, wrap).plan;
    return this.preparable(request, tools, model) ? { ...plan, pre: [...plan.pre, preparedStep(findPerl()!)] } : plan;
  }

  /** The host model of a run of `policy`; a required overlay that cannot be had refuses the run. */
  private async modelFor(policy: SandboxPolicy): Promise<ModelChoice> {
    try {
      return await chooseModel(this.hostModel, policy, this.tmp, this.options.unshare);
    } catch (e) {
      if (e instanceof OverlayRequiredError) throw unavailable(e.message, `${e.fix}; nothing was run`);
      throw e;
    }
  }

  /** The plan a run executes (run-plan.ts), with the steps around the program spelled out. */
  private runPlan(
    request: SandboxRunRequest,
    translation: Translation,
    tools: RunTools,
    model: ModelChoice,
    hideArgs: readonly string[] = [],
    overlayWrap?: (bwrap: string, args: readonly string[], rootMap?: (mounts: readonly string[]) => string[]) => string[],
  ): LinuxRunPlan {
    const { policy } = request;
    // a root daemon's command: bwrap behind the step that maps it off the host's uid 0 (root-map.ts)
    // (a write root in /proc or /sys is bound read-only whatever the policy says: kernel-surface.ts)
    const mapped = policy.write.filter((p) => !hasRawBytes(p) && !['/proc', '/sys'].some((k) => isWithin(p, k)));
    const rootMap = tools.rootMap ? (mounts?: readonly string[], hides?: readonly string[], readOnly?: boolean) => rootMapStep(tools.rootMap!.python, tools.rootMap!.range, mapped, mounts, hides, readOnly) : undefined;
    const pre: PlanStep[] = [];
    // the root map's step mounts the hidden entries it can in bwrap's place (premount.ts), and
    // under the overlay model makes the host's mounts read-only itself (readOnlyByStep)
    const wrap = rootMap
      ? (bwrap: string, args: readonly string[]) => {
          const hid = this.options.premount === 'off' ? { args: [...args], hides: [] } : premountHides(args, translation, realOr(bwrap), isPlainEntry);
          const ro = overlayWrap && this.options.premount !== 'off' && this.options.stepReadOnly !== 'off' ? readOnlyByStep(hid.args, overlayRootsOf(policy)) : { args: hid.args, readOnly: false };
          if (ro.readOnly) pre.push({ step: 'read-only host', detail: "the root map's step makes every host mount read-only, nosuid and nodev (one recursive mount_setattr; /dev and /proc, which bwrap makes anew from them, kept writable) before it mounts the overlays; bwrap binds / as it is" });
          const step = (mounts?: readonly string[]) => rootMap(mounts, hid.hides, ro.readOnly);
          return overlayWrap ? overlayWrap(bwrap, ro.args, step) : [...step(), bwrap, ...ro.args];
        }
      : overlayWrap
        ? (bwrap: string, args: readonly string[]) => {
            // an ordinary user's overlays mounted by the launcher's child (`launcher: all`), else the shell step
            const python = this.userStepPython();
            return overlayWrap(bwrap, args, python === undefined ? undefined : (mounts) => userOverlayStep(python, mounts));
          }
        : undefined;
    if ((this.options.createMissingWriteRoots ?? true) && policy.write.length > 0) pre.push({ step: 'write roots', detail: `made when missing (mode 0700): ${policy.write.join(', ')}` });
    if (translation.placeholders.length > 0) pre.push({ step: 'placeholders', detail: `empty entries made on the host and mounted read-only: ${translation.placeholders.map((p) => printablePath(p.path)).join(', ')}` });
    if (model.kind === 'overlay') pre.push({ step: 'overlay layers', detail: `each writable root (${overlayRootsOf(policy).join(', ')}) an overlay whose upper layer is in the run's directory` });
    if (tools.rootMap) pre.push({ step: 'root map', detail: `the daemon runs as root: the command runs as uid 0 of a user namespace mapped to host ids ${tools.rootMap.range.base}..${tools.rootMap.range.base + tools.rootMap.range.count - 1}, over idmapped mounts (${tools.rootMap.python})` });
    pre.push({ step: 'pid limit', detail: `at most ${this.pidLimit} processes (${this.pids?.kind ?? 'mechanism chosen at the first run'}), applied before the command starts` });
    if (policy.network === 'on') pre.push({ step: 'network', detail: `slirp4netns (${tools.slirp ?? 'slirp4netns'}) joins the sandbox's network namespace${policy.localPorts.length > 0 ? `; nft refuses loopback ports ${policy.localPorts.join(', ')}` : ''}` });
    const post: PlanStep[] =
      model.kind === 'overlay'
        ? [{ step: 'commit', detail: "the upper layers are judged against the policy; allowed writes are moved to the host, the rest kept off it (the result's deniedWrites)" }]
        : [{ step: 'landing sweep', detail: "new entries the policy does not allow are moved aside or removed (the result's deniedWrites)" }];
    post.push({ step: 'refused writes', detail: 'stderr is read for writes the read-only mounts refused' });
    const atExec = syncAtExec(policy.network, process.getuid?.(), translation.placeholders.length);
    return linuxPlan({ request, translation, bwrap: tools.bwrap, seccomp: new Uint8Array(this.filter), hideArgs, ...(wrap ? { wrap } : {}), syncAtExec: atExec, pre, post });
  }

  /**
   * Runs one command under its policy. Throws {@link SandboxUnavailableError} (and runs nothing)
   * when the policy cannot be enforced here; otherwise resolves with the result, whatever the exit.
   */
  async run(input: SandboxRunRequest): Promise<SandboxRunResult> {
    const request = checkRunRequest(input);
    this.settingUp++;
    let settingUp = true;
    const released = () => {
      if (!settingUp) return;
      settingUp = false;
      this.settingUp--;
    };
    try {
      return await this.runSettingUp(request, released);
    } finally {
      released();
    }
  }

  /** {@link run} from its checks on; `released` is called once the command is released (see {@link LinuxSandboxOptions.prepare}). */
  private async runSettingUp(request: SandboxRunRequest, released: () => void): Promise<SandboxRunResult> {
    const { policy } = request;
    const tools = await this.requireReady(policy);
    // the launcher's python starts while the scan runs (a one-shot `aalis exec` pays it once either way)
    this.launcherFor(tools)?.warm(tools.rootMap?.range);
    if (Date.now() - this.sweptAt > SWEEP_INTERVAL_MS) {
      sweepStaleRunDirs(this.tmp, (d, partial, left) => this.unjudged.push(partial ? `${d}: partially committed${left.length > 0 ? ` (left on the host: ${left.join(', ')})` : ''}, cut off midway` : d));
      this.sweptAt = Date.now();
    }
    // A socket of another program (a container shim, say) can vanish between the scan and the
    // mount: bwrap then refuses to set up and nothing has run, so scan again and retry.
    // (See transientSetupFailure in launch-state.ts for the other case.)
    let warmOk = true;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(request, tools, warmOk, released);
      } catch (e) {
        if (e instanceof ColdAgain) {
          warmOk = false;
          attempt--;
          continue;
        }
        if (!(e instanceof VanishedMountError) || attempt >= MAX_SETUP_ATTEMPTS) {
          if (e instanceof VanishedMountError) throw unavailable(`bubblewrap could not set up the sandbox: ${e.message}`, 'see `aalis doctor`; nothing was run');
          throw e;
        }
      }
    }
  }

  private async attempt(request: SandboxRunRequest, tools: RunTools, warmOk = true, released: () => void = () => {}): Promise<SandboxRunResult> {
    const { policy } = request;
    const model = await this.modelFor(policy);
    const preparable = this.preparable(request, tools, model) ? preparedKey(policy, request.cwd) : undefined;
    // its next sandbox is prepared only once the policy recurs (preparedFrom); one held already is taken all the same
    const key = preparable !== undefined && this.recurs(preparable) ? preparable : undefined;
    // taken (no other run can have it) before anything of this run is made; fail closed: whatever goes wrong, it is discarded
    let warm = preparable !== undefined && warmOk ? await this.prepared.take(preparable) : undefined;
    // the paths its start looked up, looked at again on the walks thread once the scan is done (set below)
    let identity: Promise<string> | undefined;
    // a cold run moves its sandbox into its cgroups once bwrap has started: the wait that move has starts now
    if (!warm) this.kickLead();
    const dir = warm?.dir ?? new RunDir(this.tmp);
    const launcher = warm ? undefined : this.launcherFor(tools);
    // set by the overlay run: what must go before the folder does, which the result does not wait on
    let before: Promise<unknown> | undefined;
    // a cold overlay run's layer directories, made while its scan runs (they depend on the policy alone)
    let layers: ColdLayers | undefined;
    try {
      if (model.kind === 'overlay' && !warm) {
        const layersDir = this.inRunFolder('overlay layers', () => dir.prepareLayersDir());
        layers = { dir: layersDir, made: RunOverlays.makeLayers(policy, layersDir) };
        layers.made.catch(() => {}); // its error is the run's when it is awaited (attemptOverlay)
      }
      // the launcher makes the run's FIFOs while the scan runs: one round trip off the run's path
      if (launcher) launcher.begin(this.inRunFolder('FIFO folder', () => dir.prepareFifoDir()));
      let translation: Translation;
      let facts: HostFacts;
      try {
        if (this.options.createMissingWriteRoots ?? true) {
          for (const root of policy.write) mkdirSync(root, { recursive: true, mode: 0o700 });
        }
        // off the event loop: a large tree takes seconds to walk
        facts = await this.scanFor(policy, request.cwd, tools);
        // after the scan, not beside it: a cwd symlink pointed elsewhere after the scan read it (the
        // plan the same) would be missed by an identity taken before; this one runs while the plan is built
        identity = warm ? this.host.run({ op: 'identity', paths: identityPaths(request.cwd, warm.plan) }) : undefined;
        identity?.catch(() => {}); // awaited at its release; a run that goes cold before that does not need it
        // the overlay captures every write, a new denied name included, and the commit refuses it (or
        // keeps it for an answer: kept-writes.ts): no placeholders
        translation = translatePolicy(policy, facts, { cwd: request.cwd, emptyFile: dir.emptyFile, emptyDir: dir.emptyDir, kernel: kernelSurface(), placeholders: model.kind !== 'overlay' });
      } catch (e) {
        throw unavailable(
          `the policy cannot be enforced here: ${(e as Error).message}`,
          'check the policy (real absolute paths, patterns in the contract subset) and that its roots are scannable; nothing was run',
        );
      }
      // bwrap looks up every mount source as it starts
      this.inRunFolder('empty mount sources', () => {
        if (translation.usesEmptyFile) dir.prepareEmptyFile();
        if (translation.placeholders.length > 0) dir.prepareEmptyDir();
      });
      if (model.kind === 'overlay') {
        const taken = warm;
        warm = undefined; // the overlay run owns it now
        // the next sandboxes of this policy are prepared while this one runs, from this run's scan
        // (a second scan of the same host would cost the walks thread as much again on every call),
        // so a run right after it finds one ready. Started once the command is released, not before
        // its set-up: a preparation's synchronous part (translation, plan, path identities, layers)
        // sat between this run's scan and its release, and its processes (root map, bwrap, the
        // shim's python) took the CPU from this run's own set-up. Nothing is trusted for it: the run
        // that takes it scans again and compares (releasePrepared), any difference goes cold.
        const prepareNext = () => {
          released();
          if (key !== undefined) this.prepareNext(key, request, tools, model, facts);
        };
        const from = taken && identity ? { warm: taken, identity } : { layers: layers! };
        const result = await this.attemptOverlay(request, tools, dir, translation, facts, model, (p) => (before = p), from, prepareNext);
        // topped up after it from a scan of its own: this run's commit may have changed the host
        if (key !== undefined) this.prepareNext(key, request, tools, model);
        return result;
      }
      const aside = join(this.undoneDir, basename(dir.path));
      const sweeper = new LandingSweeper(policy, facts, this.options.scan, this.options.landingSweepMs ?? DEFAULT_LANDING_SWEEP_MS, livePlaceholders, aside, this.host);
      sweeper.start();
      let result: SandboxRunResult;
      try {
        // made while bwrap starts, which waits for them before its first mount
        const prepare = () => dir.addPlaceholders(translation.placeholders);
        result = await this.spawn(request, translation, this.runPlan(request, translation, tools, model), tools, prepare, dir, undefined, undefined, released);
      } finally {
        await dir.dispose();
      }
      const undo = await sweeper.finish();
      let notes = translation.notes.join('');
      if (model.kind === 'look' && this.hostModel === 'auto') notes += `aalis: the command's writes were not captured in an overlay (look-based model: landings undone after the fact), because ${model.reason}\n`;
      if (translation.tmp.kind === 'private') notes += `aalis: /tmp in the sandbox was private and is gone with the command (${translation.tmp.reason})${policy.tmp === undefined ? '' : `; files under TMPDIR (${policy.tmp}) are kept`}\n`;
      // the entries themselves are data (movedAside); stderr keeps the one line the README promises
      const movedAside: MovedAside[] = [
        ...(undo.moved ?? []).map((m) => ({ path: m.path, to: m.to, reason: 'moved-aside' as const })),
        ...(undo.deleted ?? []).map((path) => ({ path, reason: 'deleted' as const })),
      ];
      notes += movedAsideSummary(movedAside);
      if (undo.skipped !== undefined) notes += `aalis: new files under the writable roots could not be checked against the deny rules (${undo.skipped})\n`;
      if (undo.unreadable) notes += `aalis: directories under the writable roots could not be listed, so what is in them was not checked against the deny rules: ${undo.unreadable.map(printablePath).join(', ')}\n`;
      if (undo.removed.length === 0) return notes ? { ...result, stderr: result.stderr + notes } : result;
      return { ...result, stderr: result.stderr + notes, writeDenied: true, deniedWrites: [...new Set([...result.deniedWrites, ...undo.removed])], movedAside };
    } finally {
      launcher?.abandon(join(dir.path, 'fifo')); // a run that did not launch (a no-op for one that did)
      if (warm) await this.discardPrepared(warm, false); // not used: killed; its folder goes below
      await layers?.made.catch(() => {}); // nothing makes a directory in the folder once it goes
      if (before === undefined) await dir.dispose(); // off the event loop (run-dir.ts)
      else {
        // the folder goes once the layers have: after the result. A daemon killed meanwhile leaves
        // it to the sweep at the next start (its pid is gone), as any run cut off does.
        this.untilClosed(before.then(() => dir.dispose()));
      }
    }
  }

  /**
   * The run under the overlay model (overlay-run.ts): the command's writes go to per-run upper
   * layers, judged and committed after it ends; no look, no landing on the host meanwhile.
   */
  private async attemptOverlay(
    request: SandboxRunRequest,
    tools: RunTools,
    dir: RunDir,
    translation: Translation,
    facts: HostFacts,
    model: ModelChoice & { kind: 'overlay' },
    afterResult: (removal: Promise<unknown>) => void,
    from: { readonly warm: Warm; readonly identity: Promise<string> } | { readonly layers: ColdLayers },
    onRelease?: () => void,
  ): Promise<SandboxRunResult> {
    const { policy } = request;
    if ('warm' in from) return await this.releasePrepared(request, tools, dir, translation, facts, model, afterResult, from.warm, from.identity, onRelease);
    const { layers } = from;
    let overlays: RunOverlays;
    try {
      overlays = await RunOverlays.create(model.tools, policy, layers.dir, facts.sockets, undefined, layers.made);
      overlays.hideArgs = hideDaemonTmp(this.tmp, translation.tmp, policy, request.cwd); // other runs' layers are never readable inside (daemon-tmp.ts)
      overlays.markStart(); // host entries changed from here on are the host's (commit-conflicts.ts)
    } catch (e) {
      if (e instanceof DaemonTmpVisibleError) throw unavailable(e.message, `${e.fix}; nothing was run`);
      throw unavailable(`the run's overlay layers could not be made: ${(e as Error).message}`, 'check the daemon\'s temp directory; nothing was run');
    }
    const runPlan = this.runPlan(request, translation, tools, model, overlays.hideArgs, (bwrap, args, rootMap) => overlays.command(bwrap, args, rootMap));
    const spawned = await this.spawn(request, translation, runPlan, tools, () => {}, dir, overlays, undefined, onRelease);
    return await this.finishOverlay(request, translation, dir, overlays, afterResult, spawned, landingLinkCandidates(policy, request.cwd, facts.found, [...(facts.dangling ?? []), ...(facts.danglingLinks ?? [])]));
  }

  /** The overlay run's commit and result, after its command ended. */
  private async finishOverlay(
    request: SandboxRunRequest,
    translation: Translation,
    dir: RunDir,
    overlays: RunOverlays,
    afterResult: (removal: Promise<unknown>) => void,
    spawned: SandboxRunResult,
    landingLinks: readonly string[],
  ): Promise<SandboxRunResult> {
    const { policy } = request;
    const layersDir = join(dir.path, 'overlay');
    let result = spawned;
    // the command and its whole pid namespace are gone: nothing writes the upper layers any more
    const mountPoints = translation.mounts.map((m) => m.path);
    // a conflicting file's command version is kept beside what the look moves aside (undoneDir), by run
    const aside = join(this.undoneDir, `${basename(dir.path)}-conflicts`);
    // every root in one job of the walks thread (commit-batch.ts), each root judged on its own as before
    const commit = await overlays.commitAll((batch) => this.host.run({ op: 'commitAll', policy, mountPoints, aside, landingLinks, ...batch }));
    // on the chores thread, and not waited for: nothing in the result depends on it (the commit is
    // done, the command and its namespace are gone). What cannot be removed there the run folder's
    // disposal, after it, tries again, then the next start's sweep. Layers kept for an answer stay (kept-writes.ts).
    if (!(request.keepRefused === true && commit.refused.length > 0)) afterResult(this.host.run({ op: 'removeLayers', dir: layersDir }).catch(() => {}));
    let notes = translation.notes.join('') + commit.notes + (await this.syncCommitted(policy, commit.committed));
    if (translation.tmp.kind === 'private') notes += `aalis: /tmp in the sandbox was private and is gone with the command (${translation.tmp.reason})${policy.tmp === undefined ? '' : `; files under TMPDIR (${policy.tmp}) are kept`}\n`;
    if (this.unjudged.length > 0) {
      const partial = this.unjudged.filter((d) => d.endsWith('cut off midway'));
      if (partial.length > 0) notes += `aalis: a daemon that died while committing a run's writes left them partially committed (what was committed stays on the host, the rest was discarded; removals come last, so what the command deleted or moved may still be there too; its temp files were removed, save those named): ${partial.join(', ')}\n`;
      const never = this.unjudged.filter((d) => !d.endsWith('cut off midway'));
      if (never.length > 0) notes += `aalis: a daemon that died during a run left writes never judged; they were discarded, not committed (${never.join(', ')})\n`;
      this.unjudged = [];
    }
    if (commit.conflicts.length > 0) result = { ...result, conflicts: commit.conflicts };
    const movedAside: MovedAside[] = [
      ...commit.refused.map((path) => ({ path, reason: 'kept-off' as const })),
      ...commit.conflicts.map((c) => ({ path: c.path, ...(c.keptAt === undefined ? {} : { to: c.keptAt }), reason: 'conflict' as const })),
    ];
    notes += movedAsideSummary(movedAside);
    if (movedAside.length > 0) result = { ...result, movedAside };
    if (commit.refused.length === 0) return notes ? { ...result, stderr: result.stderr + notes } : result;
    // kept for an answer: the layers outlive this run's folder until committed or discarded (kept-writes.ts)
    const keptWrites = request.keepRefused ? this.kept.keep(overlays, dir, commit.refused, mountPoints) : undefined;
    return { ...result, stderr: result.stderr + notes, writeDenied: true, deniedWrites: [...new Set([...result.deniedWrites, ...commit.refused])], ...(keptWrites ? { keptWrites } : {}) };
  }

  /**
   * Waits for a killed sandbox's end, bounded (bounded-end.ts): past the bound what remains of it is
   * killed through its cgroup or verified pid namespace, then our ends of its pipes are closed. What
   * that took is said through {@link LinuxSandboxOptions.onWarning}. Always resolves.
   */
  private async endBounded(what: string, child: Started, remains: () => SandboxRemains): Promise<ForcedEnd | undefined> {
    // our read ends only: closing the setup sync fd (dispose) would release a sandbox still in its setup
    const closeOurs = () => {
      for (const s of [child.stdout, child.stderr, child.info]) s.destroy();
    };
    const forced = await endWithin(child.ended, remains, closeOurs, { python: findPython(this.options.python) });
    if (forced) this.options.onWarning?.(forcedEndLine(what, forced));
    return forced;
  }

  /** A run's tear-down its result does not wait for; {@link close} waits for it. */
  private untilClosed(work: Promise<unknown>): void {
    const done = work.then(
      () => {},
      () => {},
    );
    this.tearDowns.add(done);
    void done.finally(() => this.tearDowns.delete(done));
  }

  /**
   * What the run makes in its folder (the daemon's temp directory): an error there is the temp
   * directory's (space, inodes, permissions), never the policy's, and nothing has run.
   */
  private inRunFolder<T>(what: string, make: () => T): T {
    try {
      return make();
    } catch (e) {
      throw unavailable(`the run's ${what} could not be made in the daemon's temp directory (${this.tmp}): ${(e as Error).message}`, "check the daemon's temp directory (free space and inodes, permissions); nothing was run");
    }
  }

  private kickLead(): void {
    if (this.lead instanceof CgroupLead) this.lead.kick();
  }

  /** Whether the next sandbox of this run's policy is prepared ahead: see {@link LinuxSandboxOptions.prepare}. */
  private preparable(request: SandboxRunRequest, tools: RunTools, model: ModelChoice): model is ModelChoice & { kind: 'overlay' } {
    const setting = this.options.prepare ?? 'off';
    // the shim is perl's (prepared.ts): a host without it runs cold
    return setting === 'on' && model.kind === 'overlay' && request.policy.network !== 'on' && tools.rootMap !== undefined && findPerl() !== undefined && this.launcherPython(tools) !== undefined;
  }

  /**
   * Notes a run of `key` now; whether it is at least the {@link LinuxSandboxOptions.preparedFrom}th
   * within the idle time of the one before. Keys not run for that long are forgotten.
   */
  private recurs(key: string): boolean {
    const from = Math.max(1, Math.floor(this.options.preparedFrom ?? 1));
    if (from === 1) return true;
    const now = Date.now();
    const before = this.runsOf.get(key);
    const streak = before !== undefined && now - before.last <= (this.options.preparedIdleMs ?? DEFAULT_PREPARED_IDLE_MS) ? before.streak + 1 : 1;
    this.runsOf.delete(key); // the most recently run last
    this.runsOf.set(key, { last: now, streak });
    if (this.runsOf.size > 4096) this.runsOf.delete(this.runsOf.keys().next().value!); // the least recently run
    return streak >= from;
  }

  /** Starts preparing sandboxes for `key` in the background until it holds its share (held or under way). */
  private prepareNext(key: string, request: SandboxRunRequest, tools: RunTools, model: ModelChoice & { kind: 'overlay' }, facts?: HostFacts): void {
    if (this.settingUp > 0) return; // runs compete for the cores: see LinuxSandboxOptions.prepare
    while (!this.closing) {
      const job = this.prepared.add(key, () => this.prepareOne(key, request, tools, model, facts));
      if (!job) return;
      this.preparing.add(job);
      void job.finally(() => this.preparing.delete(job));
    }
  }

  /**
   * One sandbox for `request`'s policy and cwd, made the way a cold run makes its own, with the shim
   * for the command (prepared.ts): released once its pid limit holds, so bwrap sets up and the shim
   * waits on stdin. Undefined when anything fails (whatever was made is taken down).
   */
  private async prepareOne(key: string, request: SandboxRunRequest, tools: RunTools, model: ModelChoice & { kind: 'overlay' }, scanned?: HostFacts): Promise<Warm | undefined> {
    const { policy, cwd } = request;
    // each preparation's synchronous part (translation, plan, path identities, layers) is a turn of
    // the event loop of its own, not part of the turn that started it: two of them there held the
    // loop for both (and a run's release behind them)
    await new Promise((resolve) => setImmediate(resolve));
    if (this.closing) return undefined;
    this.kickLead();
    const dir = new RunDir(this.tmp);
    const shim = shimRequest(request, findPerl()!, basename(dir.path));
    let child: Started | undefined;
    let pid: number | undefined;
    let pinned: PinnedPid | undefined;
    let limit: RunPidLimit | undefined;
    try {
      dir.markPrepared();
      const facts = scanned ?? (await this.scanFor(policy, cwd, tools));
      const translation = translatePolicy(policy, facts, { cwd, emptyFile: dir.emptyFile, emptyDir: dir.emptyDir, kernel: kernelSurface(), placeholders: false });
      if (translation.usesEmptyFile) dir.prepareEmptyFile();
      const overlays = await RunOverlays.create(model.tools, policy, dir.prepareLayersDir(), facts.sockets);
      overlays.hideArgs = hideDaemonTmp(this.tmp, translation.tmp, policy, cwd);
      const plan = this.runPlan(shim, translation, tools, model, overlays.hideArgs, (bwrap, args, rootMap) => overlays.command(bwrap, args, rootMap));
      // before the start: a change after it is then seen at release, whenever bwrap looked
      const identity = await this.host.run({ op: 'identity', paths: identityPaths(cwd, plan) });
      const pidReady = preparePidLimit(this.pids!, this.pidLimit, basename(dir.path));
      pidReady.catch(() => {});
      try {
        child = await this.start(shim, plan, tools, dir, true);
      } finally {
        limit = await pidReady.catch(() => undefined);
      }
      if (!limit) throw new Error('no pid limit');
      if (child.pid !== undefined) {
        limit.adopt(child.pid);
        this.cpu?.adopt(child.pid);
      }
      pid = await readChildPid(child.info);
      pinned = pinPid(pid); // while it waits on the sync fd: what a kill below checks (pinned-pid.ts)
      await Promise.all([limit.enter(pid), this.cpu?.enter(pid)]);
      const started = child;
      // the shim's one byte on stdout: bwrap has set up and exec'd it; anything else, or an end first, is a failure
      const ready = await new Promise<boolean>((resolve) => {
        const stop = () => {
          this.readyWaits.delete(stop);
          clearTimeout(timer);
          resolve(false);
        };
        const timer = setTimeout(stop, 15_000);
        timer.unref();
        this.readyWaits.add(stop);
        if (this.closing) return stop();
        // stdout flows on, with no reader until a run attaches (before its release: nothing is lost), so the shim's death is seen at once
        started.stdout.once('data', (c: Buffer) => {
          this.readyWaits.delete(stop);
          clearTimeout(timer);
          resolve(c.length === 1 && c[0] === 10);
        });
        void started.ended.then(stop);
        // read (and dropped) until a run attaches to it, so a bwrap that fails its set-up is seen ending at once
        started.stderr.resume();
        started.release();
      });
      if (!ready || this.closing) throw new Error('not ready');
      const prepared: Warm = { key, dir, overlays, translation, plan, identity, child, pid, ...(pinned ? { pinned } : {}), pidLimit: limit, dead: false };
      void child.ended.then(() => {
        prepared.dead = true;
      });
      this.counts.prepared++;
      return prepared;
    } catch {
      if (child) {
        child.killBwrap();
        // a sandbox still waiting on its setup sync holds its pipes until killed itself (launch-state.ts)
        killPinned(pinned);
        child.stdout.resume();
        child.stderr.resume();
        const started = child;
        await this.endBounded('a sandbox being prepared', started, () => ({ runDir: dir.path, ...(pid === undefined ? {} : { pid }), ...(limit?.cgroup ? { cgroup: limit.cgroup } : {}) }));
        child.dispose();
        if (pid !== undefined) await sandboxGone(pid);
      }
      await limit?.release();
      await dir.dispose();
      return undefined;
    }
  }

  /** Kills a prepared sandbox that will not run anything (after its release its parent's death takes it) and frees what it holds; its folder too unless `withDir` is false. */
  private async discardPrepared(p: Warm, withDir = true): Promise<void> {
    this.counts.discarded++;
    p.dead = true;
    p.child.claim(); // its end is waited for now: the process stays until then
    p.child.killBwrap();
    p.child.stdout.resume();
    p.child.stderr.resume();
    // bounded: a pid 1 that outlived bwrap would hold its FIFOs, and close() (a daemon's stop) with them, for ever
    await this.endBounded('a prepared sandbox', p.child, () => ({ runDir: p.dir.path, pid: p.pid, ...(p.pidLimit.cgroup ? { cgroup: p.pidLimit.cgroup } : {}) }));
    p.child.dispose();
    // bwrap reaped, its sandbox's pid 1 dies of it (parent-death signal) and takes the shim with it: waited for, so nothing outlives close()
    await sandboxGone(p.pid);
    await p.pidLimit.release();
    if (withDir) await p.dir.dispose();
  }

  /**
   * A run in a prepared sandbox: the argv a cold run would start now (this run's scan and
   * translation, the shim for the command, the prepared one's folder) must be the one it was
   * started with, or it is discarded and the run goes cold ({@link ColdAgain}). The start stamp is
   * taken here, at release, not when it was prepared.
   */
  private async releasePrepared(
    request: SandboxRunRequest,
    tools: RunTools,
    dir: RunDir,
    translation: Translation,
    facts: HostFacts,
    model: ModelChoice & { kind: 'overlay' },
    afterResult: (removal: Promise<unknown>) => void,
    warm: Warm,
    identityNow: Promise<string>,
    onRelease?: () => void,
  ): Promise<SandboxRunResult> {
    const { policy } = request;
    const overlays = warm.overlays;
    let now: LinuxRunPlan;
    try {
      const hideArgs = hideDaemonTmp(this.tmp, translation.tmp, policy, request.cwd);
      const binds = socketBinds(overlays.overlays, facts.sockets.filter((p) => !hasRawBytes(p)));
      now = this.runPlan(shimRequest(request, findPerl()!, basename(dir.path)), translation, tools, model, hideArgs, (bwrap, args, rootMap) => overlayLaunch(model.tools, overlays.overlays, binds, bwrap, args, rootMap));
      if (warm.dead || !samePlan(now, warm.plan)) throw new ColdAgain('changed');
      // of warm.plan's paths, taken after the scan (attempt): the same paths as now's, the plans being the same
      const identity = await identityNow;
      // checked again after the wait: the sandbox may have died meanwhile
      if (warm.dead || identity !== warm.identity) throw new ColdAgain('changed');
      dir.released(); // from here on a daemon killed leaves the run's writes, unjudged, and its sweep says so
      overlays.markStart();
    } catch {
      await this.discardPrepared(warm, false); // the folder goes with the attempt
      throw new ColdAgain('the prepared sandbox was not used');
    }
    this.counts.used++;
    const token = randomBytes(16).toString('hex');
    const payload = shimPayload(request, { ...request.env, ...tmpEnv(policy.tmp) }, token);
    const spawned = await this.spawn(request, translation, now, tools, () => {}, dir, overlays, { prepared: warm, payload, token }, onRelease);
    return await this.finishOverlay(request, translation, dir, overlays, afterResult, spawned, landingLinkCandidates(request.policy, request.cwd, facts.found, [...(facts.dangling ?? []), ...(facts.danglingLinks ?? [])]));
  }

  /** The launcher of a run, or none (the per-run chain): see {@link LinuxSandboxOptions.launcher}. */
  private launcherFor(tools: Pick<RunTools, 'rootMap'>): Launcher | undefined {
    const python = this.launcherPython(tools);
    if (python === undefined) return undefined;
    // closing: never a new launcher (nobody would end it); a run here fails closed instead of taking the per-run chain
    if (this.closing) throw unavailable('the sandbox service is closing: no new command starts', 'run it again once the daemon is up; nothing was run');
    this.launcher ??= new Launcher(python, LAUNCHER_REPLY_MS, (pid) => this.cpu?.adopt(pid));
    return this.launcher;
  }

  /** The interpreter a run's launcher runs on, or none when the run takes the per-run chain; makes nothing. */
  private launcherPython(tools: Pick<RunTools, 'rootMap'>): string | undefined {
    const python = tools.rootMap?.python ?? this.userStepPython();
    return python === undefined || this.options.launcher === 'off' ? undefined : python;
  }

  /**
   * The interpreter of an ordinary user's launcher (`launcher: all`), found by the root map's rule
   * (findPython: the system's, never a PATH shim); none for root (its unmapped runs, `rootUidMap:
   * off`, keep the shell step, which does not make a user namespace) and without python.
   */
  private userStepPython(): string | undefined {
    if (this.options.launcher !== 'all' || (process.geteuid?.() ?? 0) === 0) return undefined;
    // looked up once: every run asks (its plan, its start, its end's reading)
    this.userPython ??= findPython(this.options.python) ?? null;
    return this.userPython ?? undefined;
  }

  /**
   * The launcher that starts a run's network helpers (slirp4netns, the localPorts filter): a mapped
   * run's only. An ordinary user's sandbox is in a user namespace of bwrap's making, which the
   * launcher (no capability there) cannot enter to put the filter in; its helpers start as before.
   */
  private netLauncherFor(tools: Pick<RunTools, 'rootMap'>): Launcher | undefined {
    return tools.rootMap ? this.launcherFor(tools) : undefined;
  }

  /**
   * Starts the plan's argv: by the launcher (no fork of the daemon), or by a fork of the daemon
   * (execa). Either way the same fds: stdin, stdout, stderr, seccomp on 3, info on 4, setup sync on
   * 5, args on 6, env on 7.
   */
  private async start(request: SandboxRunRequest, runPlan: LinuxRunPlan, tools: RunTools, dir: RunDir, background = false): Promise<Started> {
    const [file, ...argv] = runPlan.plan.argv;
    const launcher = this.launcherFor(tools);
    if (launcher) {
      // [-I, -S, -c, ROOT_MAP_PY or USER_STEP_PY, operands...]: the child runs that function itself
      const mapped = argv[3] === ROOT_MAP_PY;
      const userStep = argv[3] === USER_STEP_PY;
      const fds: Record<number, Uint8Array> = { 3: runPlan.seccomp, [ENV_FD]: runPlan.envBytes };
      if (runPlan.argsBytes) fds[ARGS_FD] = runPlan.argsBytes;
      const fifoDir = this.inRunFolder('FIFO folder', () => dir.prepareFifoDir());
      const argvOf = mapped || userStep ? argv.slice(4) : [file!, ...argv];
      const run = await launcher.launch(fifoDir, { argv: argvOf, env: runPlan.plan.env, rootMap: mapped, ...(userStep ? { userStep } : {}), fds, stdin: request.stdin !== undefined, background });
      return launchedStart(run);
    }
    // exactly the plan: its argv, its env, its fds
    const stdio: (string | Uint8Array)[] = [request.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', runPlan.seccomp, 'pipe', 'pipe'];
    stdio[ARGS_FD] = runPlan.argsBytes ?? 'ignore';
    stdio[ENV_FD] = runPlan.envBytes;
    const execa = await loadExeca();
    const child = execa(file!, argv, {
      env: runPlan.plan.env,
      extendEnv: false,
      cwd: '/',
      reject: false,
      buffer: false,
      stripFinalNewline: false,
      // biome-ignore lint/suspicious/noExplicitAny: execa's stdio tuple type does not accept a computed array
      stdio: stdio as any,
    });
    const fds = child.stdio as unknown as (Readable & Writable)[];
    return {
      pid: child.pid,
      stdin: fds[0] ?? undefined,
      stdout: fds[1]!,
      stderr: fds[2]!,
      info: fds[INFO_FD]!,
      release: () => fds[SETUP_SYNC_FD]!.end(),
      killBwrap: () => child.kill('SIGKILL'),
      ended: child.then((r) => ({ exitCode: r.exitCode, signal: r.signal })),
      dispose: () => fds[SETUP_SYNC_FD]?.destroy(), // bwrap is gone by now: nothing reads it any more
      claim: () => {},
    };
  }

  private async spawn(
    request: SandboxRunRequest,
    translation: Translation,
    runPlan: LinuxRunPlan,
    tools: RunTools,
    prepare: () => void,
    dir: RunDir,
    overlays?: RunOverlays,
    warm?: { readonly prepared: Warm; readonly payload: Buffer; readonly token: string },
    onRelease?: () => void,
  ): Promise<SandboxRunResult> {
    const netOn = request.policy.network === 'on';
    const net = netOn ? planNetwork(request.policy, this.options.nft ?? 'nft') : undefined;
    // the run's cgroup is made while bwrap starts (a prepared sandbox is in its own already)
    const pidReady = warm ? Promise.resolve(warm.prepared.pidLimit) : preparePidLimit(this.pids!, this.pidLimit, basename(dir.path));
    pidReady.catch(() => {}); // awaited below; a run that ends before that only releases it
    let child: Started;
    try {
      child = warm ? warm.prepared.child : await this.start(request, runPlan, tools, dir);
    } catch (e) {
      await (await pidReady.catch(() => undefined))?.release();
      throw e;
    }
    // whether bwrap exec'd the command (a prepared sandbox's info was read when it was prepared: its shim was exec'd then)
    const execd = warm ? undefined : watchExec(child.info);
    if (warm) child.claim();
    else if (child.pid !== undefined) {
      const bwrapPid = child.pid;
      pidReady.then((l) => l.adopt(bwrapPid)).catch(() => {});
      this.cpu?.adopt(bwrapPid);
    }
    const limit = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    const out = new BoundedOutput(limit);
    const err = new BoundedOutput(limit);
    out.attach(child.stdout);
    err.attach(child.stderr);
    // stdin fed as the command reads it (a live source chunk by chunk); a prepared sandbox's shim reads its payload first (below)
    let feed: StdinFeed | undefined = request.stdin !== undefined && !warm && child.stdin ? feedStdin(request.stdin, child.stdin) : undefined;
    // the launch's state machine (launch-state.ts): every step below moves it, a kill at any time too;
    // a prepared sandbox is held from the start: set up, its shim waiting for the command
    let state: LaunchState = warm ? { kind: 'held', pid: warm.prepared.pid } : { kind: 'starting', killAsked: false };
    let failure: SetupFailure | undefined;
    let timedOut = false;
    // the sandbox's pid 1, pinned when its pid is read (pinned-pid.ts): a kill by pid checks it is still that process
    let pinned: PinnedPid | undefined = warm?.prepared.pinned;
    const killer: Killer = {
      killBwrap: () => child.killBwrap(),
      killPid: (pid) => {
        if (pinned?.pid === pid) killPinned(pinned);
      },
    };
    let killAsked!: () => void;
    const afterKill = new Promise<void>((resolve) => {
      killAsked = resolve;
    });
    const kill = () => {
      state = killed(state, killer);
      killAsked();
    };
    // the run's cgroup, through which what outlives a kill is killed (bounded-end.ts)
    let cgroup: string | undefined;
    pidReady.then((l) => (cgroup = l.cgroup)).catch(() => {});
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, request.timeoutMs);
    const onAbort = () => kill();
    request.signal?.addEventListener('abort', onAbort);
    if (request.signal?.aborted) kill();
    // the launcher lost mid-run: bwrap went with it (--die-with-parent); a sandbox still in its setup is killed by pid
    void child.ended.then((r) => {
      if (r.lost !== undefined) kill();
    });
    let slirp: Slirp | undefined;
    let pidLimited: RunPidLimit | undefined;
    // the pid limit before anything of the command runs (its first process waits on the sync fd)
    // and the CPU share beside it, which never fails a run
    const applyPidLimit = async (pid: number): Promise<SetupFailure | undefined> => {
      const share = this.cpu?.enter(pid);
      try {
        pidLimited = await pidReady;
        await pidLimited.enter(pid);
        return undefined;
      } catch (e) {
        return { step: 'pid-limit', error: e as Error };
      } finally {
        await share;
      }
    };
    try {
      // step 1: the placeholders, while bwrap starts
      try {
        prepare();
      } catch (e) {
        failure = { step: 'placeholders', error: e as Error };
      }
      // step 2: the sandbox's pid, before anything else (a prepared sandbox's was read when it was prepared)
      const pid = await (warm ? Promise.resolve(warm.prepared.pid) : readChildPid(child.info)).then(
        (p) => ({ ok: true as const, pid: p }),
        (e: Error) => ({ ok: false as const, error: e }), // bwrap ended before it made the sandbox: its stderr says why
      );
      // pinned now, while it waits on the sync fd (a prepared one was pinned when it was prepared)
      if (pid.ok && !warm) pinned = pinPid(pid.pid);
      state = sandboxKnown(state, pid, failure, killer);
      // step 3: the pid limit, and with network on slirp4netns and nft beside it
      const held = state;
      if (warm) {
        // in its cgroup since it was prepared; the limit is written again, so a change on the host meanwhile is not inherited
        try {
          await warm.prepared.pidLimit.reassert(warm.prepared.pid);
        } catch (e) {
          failure = { step: 'pid-limit', error: e as Error };
        }
      } else if (held.kind === 'held' && !net) {
        failure = await applyPidLimit(held.pid);
      } else if (held.kind === 'held' && net) {
        // started by the run's launcher where it has one (no fork of the daemon), in the run's FIFO folder
        const launcher = this.netLauncherFor(tools);
        const fifoDir = join(dir.path, 'fifo');
        const helpers = launcher ? launcherNetHelper(launcher, fifoDir) : forkNetHelper;
        // the launcher applies the filter itself (no nsenter, no nft) unless an nft was configured
        const route: FilterRoute | undefined = !net.filter
          ? undefined
          : launcher && this.options.nft === undefined
            ? { kind: 'launcher', apply: launcherFilter(launcher, fifoDir, this.options.nftLibrary ?? NFT_LIBRARY) }
            : { kind: 'exec', start: helpers, tools: net.filter.tools, rootMapped: tools.rootMap !== undefined };
        const [started, filtered, limited] = await Promise.allSettled([
          slirpWithRetry(helpers, tools.slirp!, held.pid, net.hostLoopback),
          net.filter && route ? installLoopbackFilter(route, held.pid, net.filter.rules) : undefined,
          applyPidLimit(held.pid),
        ]);
        if (started.status === 'fulfilled') slirp = started.value;
        const netError = started.status === 'rejected' ? (started.reason as Error) : filtered.status === 'rejected' ? (filtered.reason as Error) : undefined; // nft exits 0 only with every rule in place
        const limitFailure = limited.status === 'fulfilled' ? limited.value : undefined;
        // after a timeout or an abort a network error is only the consequence of the kill
        failure = limitFailure ?? (netError && state.kind === 'held' ? { step: 'network', error: netError } : undefined);
      } else if (state.kind === 'no-sandbox' && net && !failure) {
        failure = { step: 'network', error: state.error };
      }
      // step 4: released to run the command, or killed when a step failed
      if (failure) kill();
      else if (warm) {
        // the shim reads the command from its stdin (prepared.ts), then the command reads the rest
        state = released(state, () => {
          child.stdin?.write(warm.payload);
          if (request.stdin === undefined || !child.stdin) child.stdin?.end();
          else feed = feedStdin(request.stdin, child.stdin);
        });
      } else state = released(state, () => child.release());
      if (state.kind === 'released') onRelease?.(); // the command runs: what waits for that starts (prepared sandboxes)
      // after a kill (a timeout, an abort, a failed step) the end is bounded: a sandbox that outlives
      // it is killed through what the run owns, then its pipes closed on our side (bounded-end.ts)
      let bounded: Promise<unknown> | undefined;
      const r = await Promise.race([
        child.ended,
        afterKill.then(() => {
          const end = (async () => {
            const forced = await this.endBounded('a killed run', child, () => ({ runDir: dir.path, ...(state.kind === 'killed' && state.pid !== undefined ? { pid: state.pid } : {}), ...(cgroup ? { cgroup } : {}) }));
            return forced?.abandoned ? { signal: 'SIGKILL' } : await child.ended;
          })();
          bounded = end;
          return end;
        }),
      ]);
      // the end its kill forced came first: what the bounded end has to say (onWarning) is said before the result
      await bounded?.catch(() => {});
      // a prepared sandbox's shim marks its own failures with the run's token (prepared.ts SHIM_FAILED); the line goes
      const shim = warm ? shimFailure(err.text(), warm.token) : undefined;
      const stderr = shim?.stderr ?? err.text();
      // only where stderr reads like bwrap's own setup error is it asked whether the command ran (its end is bwrap's)
      const commandRan = shim ? !shim.failed : execd && r.exitCode === 1 && stderr.startsWith('bwrap: ') ? await execd : undefined;
      const error = launchFailure({ state, failure, stderr, exitCode: r.exitCode, ...(commandRan === undefined ? {} : { commandRan }), ...(warm ? { setupDone: true } : {}), overlays: overlays !== undefined, rootMap: tools.rootMap !== undefined, viaLauncher: this.launcherPython(tools) !== undefined, ...(r.lost === undefined ? {} : { launcherLost: r.lost }) }, translation, existsSync);
      if (error) throw error;
      const mounted = new Set(translation.mounts.map((m) => m.path));
      const denied = refusedWritesIn(stderr, request.cwd, linuxRefusal(mounted, new Set(translation.placeholders.map((p) => p.path))));
      const wasKilled = state.kind === 'killed';
      // only where the sandbox said the command never started: a command's own such line stays its own
      const notRun = !wasKilled && commandRan === false ? commandNotRun(r.exitCode ?? null, stderr) : undefined;
      return {
        stdout: out.text(),
        stderr: notRun?.stderr ?? stderr,
        exitCode: wasKilled ? null : (notRun?.exitCode ?? r.exitCode ?? null),
        signal: wasKilled ? 'SIGKILL' : (r.signal ?? null),
        timedOut,
        truncated: out.truncated || err.truncated,
        writeDenied: denied.denied,
        deniedWrites: denied.paths,
      };
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      feed?.stop(); // the run is over: a live stdin is closed, what was not read dropped
      child.dispose();
      // slirp4netns serves this run's network namespace only, which nothing is in any more: its
      // end (the tap device's removal waits on the kernel, ~20 ms) is not waited for; close() waits
      if (slirp) this.untilClosed(slirp.stop());
      await (pidLimited ?? (await pidReady.catch(() => undefined)))?.release();
    }
  }
}

/**
 * bubblewrap reports the sandbox's pid before it has finished mapping the ids of its user
 * namespace when it runs unprivileged; slirp4netns joining in that window is refused
 * (`setns(CLONE_NEWNET): Operation not permitted`). The sandbox waits in its setup meanwhile (see
 * SETUP_SYNC_FD), so trying again a little later is safe; anything else fails at once.
 */
async function slirpWithRetry(start: StartNetHelper, slirp4netns: string, pid: number, hostLoopback: boolean): Promise<Slirp> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSlirp(start, `slirp-${attempt}`, slirp4netns, pid, hostLoopback);
    } catch (e) {
      if (attempt >= 6 || !/setns\(CLONE_NEWNET\): Operation not permitted/.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 25 * attempt));
    }
  }
}

/** Resolves once `pid` has exited (gone, or a zombie: its pid namespace is emptied by then), or after 10 s. */
async function sandboxGone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    let stat: string;
    try {
      stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return;
    }
    if (/^\d+ \(.*\) [ZX]/s.test(stat)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A started launch, whichever way it was started. */
interface Started {
  readonly pid: number | undefined;
  readonly stdin: Writable | undefined;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly info: Readable;
  /** Closes the setup sync fd: the sandbox runs the command. */
  release(): void;
  killBwrap(): void;
  /** bwrap's end, once its output is drained too; `lost`: the launcher died first. */
  readonly ended: Promise<{ exitCode?: number; signal?: string; lost?: string }>;
  dispose(): void;
  /** A prepared sandbox's run is this request's now: it keeps the process alive. */
  claim(): void;
}

/** A launcher's run as a {@link Started}: its end once bwrap is reaped and stdout and stderr are read to their ends. */
function launchedStart(run: LaunchedRun): Started {
  const drained = (s: Readable) => new Promise<void>((resolve) => (s.readableEnded || s.destroyed ? resolve() : s.once('close', () => resolve())));
  const ended = run.exit.then(async (e: LauncherExit) => {
    if (e.kind === 'lost') {
      // nothing of its output can be trusted: not waited for; the info and sync FIFOs stay open
      // until the launch state has killed a sandbox still in its setup (closing sync would release it)
      run.stdout.destroy();
      run.stderr.destroy();
      return { lost: e.reason };
    }
    await Promise.all([drained(run.stdout), drained(run.stderr)]);
    return e.kind === 'exit' ? { exitCode: e.code } : { signal: e.signal };
  });
  return { pid: run.pid, stdin: run.stdin, stdout: run.stdout, stderr: run.stderr, info: run.info, release: () => run.release(), killBwrap: () => run.kill(), ended, dispose: () => run.dispose(), claim: () => run.claim() };
}

/** A cold overlay run's layer folder, its directories made while the run scans (attempt). */
interface ColdLayers {
  readonly dir: string;
  readonly made: Promise<void>;
}

/** A Linux sandbox service; see {@link LinuxSandboxOptions}. */
export function createLinuxSandbox(options: LinuxSandboxOptions = {}): LinuxSandbox {
  return new LinuxSandbox(options);
}
