import { realpath, stat } from 'node:fs/promises';
import { closeSync, readlinkSync } from 'node:fs';
import { AalisError, openDirNoFollow, removeTreeAt, removeTreeSync } from '@aalis/core';
import { constants } from 'node:os';
import {
  PLAN_RUN_DIR,
  refusedWritesIn,
  type SandboxPlan,
  type SandboxPolicy,
  type SandboxProbe,
  type SandboxRunRequest,
  type SandboxRunResult,
  type SandboxService,
  SandboxUnavailableError,
} from '@aalis/api-reach';
import { ZodError } from 'zod';
import { containerEnv } from './container-env.js';
import { type DockerClientOptions, DockerCli, engineUnusable } from './docker-cli.js';
import { LABELS } from './labels.js';
import { type DeniedWrite, deniedWritesAfter, type MountPlan, planMounts, type WritesAfter } from './mount-plan.js';
import { dockerRefusal } from './refusal-test.js';
import { probeEngine } from './probe-engine.js';
import { dropCachedProbe, loadCachedProbe, type ProbeCacheOptions, storeProbe } from './probe-cache.js';
import { type AttachOutcome, type AttachRequest, attachClient, removedOrGone } from './attach-client.js';
import { MountPolicyError } from './mount-policy-error.js';
import { openUpOwnAt, openUpOwnFd } from './own-dirs.js';
import { type ContainerIdentity, type ContainerProfile, type ResolvedProfile, resolveProfile } from './profile.js';
import { isWithin } from './rule-match.js';
import { ownerLabels, PROCESS_RUN } from './owner.js';
import { orphansIn, REAP_FORMAT } from './orphans.js';
import { clientLostEngine, missingDeadlineProgram, startFailed } from './client-outcome.js';
import { dockerRunArgs } from './run-args.js';
import { SessionContainer } from './session-container.js';
import { validateRequest } from './validate-request.js';
import { REMOVE_CONTAINER } from './container-removal.js';
import { EngineApi } from './engine-api.js';
import { holdStill, type StillScope, untilNoSection } from './hold-still.js';

/**
 * Removes each denied write from the host, by its bytes, never following a symlink anywhere on
 * the way (core's `removeTreeSync`: the parent verified to be the judged path, the tree removed by
 * descriptors). By path, a parent another container swapped for a symlink between the walk and the
 * removal was followed, and files outside the workspace were deleted (found by an attack). The
 * paths that could not be removed, with why (a parent swapped meanwhile: `parent-elsewhere`).
 */
export async function removeAll(denied: readonly DeniedWrite[]): Promise<string[]> {
  const failed: string[] = [];
  for (const w of denied) {
    try {
      if (w.bytes.length < PATH_MAX) removeTreeSync(w.bytes);
      else removeFromParent(w.bytes, false);
    } catch {
      // a folder of the daemon's own the command closed to its owner (`chmod 555`, `chmod 000`),
      // when the daemon is not root: removed again with its owner's bits given back on the way,
      // by descriptors, however deep (found by attacks, h116 and h120)
      try {
        removeFromParent(w.bytes, true);
      } catch (again) {
        failed.push(`${w.path} (${(again as { code?: string }).code ?? (again as Error).message})`);
      }
    }
  }
  return failed;
}

/**
 * Removes the tree at `bytes` from the directory holding it, opened without following a link and
 * checked to be that directory by its path (a symlink on the way fails the check); by descriptors
 * below it, so no depth stops it (a tree past PATH_MAX, which no path call takes). `openUp`: each
 * directory of the daemon's own on the way down is given its owner's bits first (own-dirs.ts).
 */
function removeFromParent(bytes: Buffer, openUp: boolean): void {
  const at = bytes.lastIndexOf(0x2f);
  const parent = at <= 0 ? Buffer.from('/') : bytes.subarray(0, at);
  const fd = openDirNoFollow(parent);
  if (fd === undefined) return;
  try {
    if (!readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' }).equals(parent)) throw new Error('the folder holding it is reached through a symlink now');
    const name = bytes.subarray(at + 1);
    if (openUp) {
      openUpOwnFd(fd);
      openUpOwnAt(fd, name);
    }
    const seam = {
      beforeEntry: (dirFd: number, n: Buffer) => {
        openUpOwnFd(dirFd);
        openUpOwnAt(dirFd, n);
      },
    };
    removeTreeAt(fd, name, openUp ? seam : undefined);
  } finally {
    closeSync(fd);
  }
}

/** Linux's PATH_MAX: no call takes a longer path. */
const PATH_MAX = 4096;

/** The images of the three container profiles; `network` and `builder` fall back to `stdio`. */
export interface ProfileImages {
  readonly stdio: string;
  readonly network?: string;
  readonly builder?: string;
}

/** How a {@link DockerSandbox} is set up; fixed for its life. */
export interface DockerSandboxOptions {
  readonly images: ProfileImages;
  /** This daemon instance, stable across restarts: its leftover containers are reaped at start. */
  readonly instance: string;
  readonly client?: DockerClientOptions;
  /** The profile of requests that name none (a tool's `sandbox:` block); `stdio` by default. */
  readonly defaultSpec?: unknown;
  /** Readable roots every container gets (toolchains); read-only. */
  readonly readRoots?: readonly string[];
  /** Never mounted, nor anything holding them: the daemon's own root and data, besides the engine socket. */
  readonly neverMount?: readonly string[];
  /** The writable identity (unrestricted runs); the daemon's own uid:gid by default. */
  readonly owner?: { readonly uid: number; readonly gid: number };
  /** Variables passed into every container besides the base allow list and the profile's. */
  readonly envAllow?: readonly string[];
  /** The host sandbox that profile `local` runs through; without it `local` is refused. */
  readonly local?: SandboxService;
  /** Extra labels on every container (the deployment's user). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Most entries walked under the mounted roots before a run; past it the run is refused (the walk after it is not bounded). */
  readonly walkLimit?: number;
  /** Every mount root must lie inside one of these (a deployment user's data directory). */
  readonly confineTo?: readonly string[];
  /** The longest a session container lives (its own hard deadline); 12 hours by default. */
  readonly sessionMaxMs?: number;
  /**
   * Where the last probe that found everything working is kept, so a later process (each
   * `aalis exec`) starts no probe container while it is fresh; without it each process probes once.
   */
  readonly probeCache?: ProbeCacheOptions;
}

/** A run request with what only containers have: the tool's `sandbox:` block and the identity. */
export interface DockerRunRequest extends SandboxRunRequest {
  /** The tool's `sandbox:` spec block (`profile`, limits); the provider's default when absent. */
  readonly sandboxSpec?: unknown;
  /**
   * `restricted` runs as uid 10001 so the kernel refuses writes to anything it does not own;
   * `owner` as the writable identity. By default: restricted when the policy writes nowhere but
   * its read-back temp (the readonly tier), owner otherwise.
   */
  readonly identity?: 'restricted' | 'owner';
}

/** A session's opening: everything of a run request but the command. */
export type SessionOpenRequest = Pick<DockerRunRequest, 'cwd' | 'env' | 'policy' | 'sandboxSpec' | 'identity'>;

/**
 * What a run became when the docker client lost the engine mid-run: `stopped` when the container
 * was then removed (its writes judged after), `unconfirmed` when the engine stayed out of reach
 * and the writes were judged once the container's own deadline had passed.
 */
export type EngineLoss = 'stopped' | 'unconfirmed';

/** A run's result, with what only containers can say. */
export interface DockerRunResult extends SandboxRunResult {
  /** Set when the client lost the engine mid-run; the result is then reported as killed. */
  readonly engineLost?: EngineLoss;
}

const DEFAULT_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_SESSION_MAX_MS = 12 * 60 * 60_000;
/** Seconds the container's own deadline lies past the caller's timeout: the host-side kill comes first. */
const DEADLINE_GRACE_S = 5;
/** How long past a container's deadline (taken before it was created) a run that lost the engine waits before judging its writes. */
const SUPERVISE_SLACK_MS = 5_000;
/** Container names are unique within the process run. */
let containerCounter = 0;
// A run the engine refuses (an image removed since) clears it and says why, so the image is not
// asked for again before every run: one client call less per run.
const PREFLIGHT_TTL_MS = 10 * 60_000;

/** How often a set-up whose roots resolved elsewhere in between is tried (see setUpStill). */
const SETUP_TRIES = 3;

/** A plan's roots resolved to paths the set-up's hold did not cover: set up again (never leaves this file). */
class RootsMovedError extends AalisError<'roots-moved'> {
  constructor(readonly roots: readonly string[]) {
    super('roots-moved', `the run's roots resolved elsewhere while it was set up: ${roots.join(', ')}`);
  }
}

/** How long a run's set-up waits for its container to start before it refuses. */
const START_WAIT_MS = 60_000;
/** How often the container's state is read meanwhile: at first, and at most (a run's start takes a few hundred milliseconds). */
const START_POLL_MS = 3;
const START_POLL_MAX_MS = 25;

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]));

function unavailable(reason: string, fix: string): SandboxUnavailableError {
  return new SandboxUnavailableError('docker', reason, fix);
}

function readOnlyPolicy(policy: SandboxPolicy): boolean {
  return policy.write.every((root) => policy.readAllowWithin.some((back) => isWithin(root, back)));
}

/**
 * The docker sandbox backend: each command in its own hardened one-shot container on the engine
 * `DOCKER_HOST` names, removed when it ends, times out or is aborted. Engine down, image missing
 * or a policy it cannot mount: {@link SandboxUnavailableError}, and nothing runs.
 */
export class DockerSandbox implements SandboxService {
  readonly backend = 'docker' as const;
  /** This process's run (shared by its sandboxes); containers of other runs are reaped once their owner is dead. */
  readonly runId = PROCESS_RUN;
  readonly cli: DockerCli;
  /** The engine calls that hold containers still, on the local socket where there is one. */
  readonly engine: EngineApi;
  private readonly options: DockerSandboxOptions;
  private readonly preflightOk = new Map<string, number>();
  /** This process's probe: at most one per process while it finds everything working. */
  #probing: Promise<SandboxProbe> | undefined;

  constructor(options: DockerSandboxOptions) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/.test(options.instance)) {
      throw new Error(`docker sandbox instance id ${JSON.stringify(options.instance)} must be 1-63 letters, digits, '_', '.', '-'`);
    }
    this.options = options;
    this.cli = new DockerCli(options.client);
    this.engine = new EngineApi(this.cli);
    resolveProfile(options.defaultSpec ?? { profile: 'stdio' });
  }

  /** The labels that select this instance's containers. */
  get instanceFilter(): string[] {
    const filters = ['--filter', `label=${LABELS.instance}=${this.options.instance}`];
    for (const [key, value] of Object.entries(this.options.labels ?? {})) filters.push('--filter', `label=${key}=${value}`);
    return filters;
  }

  /**
   * Checks the engine, the images and the baseline a container gets. Never throws. Once per
   * process, and not at all while the probe cache holds a fresh good result for this engine,
   * these images and this uid; a run the engine refuses forgets both.
   */
  probe(): Promise<SandboxProbe> {
    this.#probing ??= this.#probeOnce().then((probe) => {
      if (!probe.available) this.#probing = undefined; // look again next time: it may have been fixed
      return probe;
    });
    return this.#probing;
  }

  async #probeOnce(): Promise<SandboxProbe> {
    const cache = this.options.probeCache;
    const key = JSON.stringify({ engine: this.cli.engine, images: this.options.images, uid: process.getuid?.() ?? null });
    const cached = cache ? await loadCachedProbe(cache, key, Date.now()) : undefined;
    if (cached) {
      this.#trustImages(cached.at);
      return cached.probe;
    }
    const probe = await probeEngine(this.cli, this.options.images);
    if (probe.available) {
      const now = Date.now();
      this.#trustImages(now);
      if (cache) await storeProbe(cache, key, probe, now);
    }
    return probe;
  }

  /** A probe saw every image present at `at`: runs skip their own image check until the TTL. */
  #trustImages(at: number): void {
    for (const image of new Set(Object.values(this.options.images))) this.preflightOk.set(image, at);
  }

  /**
   * What {@link run} would execute for `request` now: the real `docker run` argv (the identity,
   * mounts, limits and seccomp profile the run would use) and the client's environment, built by
   * the same code; nothing is created. The container's name and deadline, fixed only as a run
   * starts, read `PLAN_RUN_DIR`. Profile `local` answers the host sandbox's plan.
   */
  async plan(request: DockerRunRequest): Promise<SandboxPlan> {
    validateRequest(request);
    const resolved = this.resolve(request.sandboxSpec);
    if (resolved.kind === 'local') return this.localSandbox().plan(this.localRequest(request, resolved.envAllow));
    const timeoutMs = Math.min(request.timeoutMs, resolved.profile.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
    const prepared = await this.prepare(request, resolved.profile, 'oneshot', timeoutMs, true);
    return this.containerPlan(prepared, request);
  }

  /** Runs one command in a fresh container; see {@link DockerRunRequest}. */
  async run(request: DockerRunRequest): Promise<DockerRunResult> {
    validateRequest(request);
    const resolved = this.resolve(request.sandboxSpec);
    if (resolved.kind === 'local') return this.localSandbox().run(this.localRequest(request, resolved.envAllow));
    return this.runContainer(request, resolved.profile);
  }

  /** The host sandbox that profile `local` runs on; refused when none was configured. */
  private localSandbox(): NonNullable<DockerSandboxOptions['local']> {
    if (this.options.local === undefined) {
      throw unavailable('profile local runs on the host and no host sandbox was configured', 'give the docker sandbox a host sandbox, or use profile stdio');
    }
    return this.options.local;
  }

  /** The host sandbox takes the contract's fields only: the profile and identity are this backend's. */
  private localRequest(request: DockerRunRequest, envAllow: readonly string[]): SandboxRunRequest {
    const { sandboxSpec: _spec, identity: _identity, ...contract } = request;
    return { ...contract, env: this.localEnv(request.env, envAllow) };
  }

  private async runContainer(request: DockerRunRequest, profile: ContainerProfile): Promise<DockerRunResult> {
    const timeoutMs = Math.min(request.timeoutMs, profile.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
    // planned and started with nothing running that could move a path the mounts go through
    const { prepared, attaching } = await this.setUpStill(request, async (planned) => {
      const prepared = await planned(this.prepare(request, profile, 'oneshot', timeoutMs));
      // exactly the plan: its argv after the client binary, its env for the client
      const plan = this.containerPlan(prepared, request);
      const attaching = this.attach(prepared.args.name, plan.argv.slice(1), prepared.env, request, timeoutMs);
      await this.untilStarted(prepared.args.name, attaching);
      return { prepared, attaching };
    });
    const outcome = await attaching;
    if (!outcome.timedOut && !outcome.aborted && startFailed(outcome)) {
      await this.cli.call([...REMOVE_CONTAINER, prepared.args.name]); // a create that half happened
      throw this.refused(outcome.stderr);
    }
    const lost = await this.supervise(prepared.args.name, outcome, prepared.deadlineAt);
    return this.finish(prepared.plan, outcome, lost);
  }

  /**
   * After a client that ended without the command's exit status (the engine connection dropped:
   * status 125 with no refusal, or the client killed): makes sure the container is stopped before
   * its writes are judged. It is removed as soon as the engine answers again; while it does not,
   * this waits until the container's own deadline has killed it. Undefined when the client's end
   * was the command's.
   */
  async supervise(name: string, outcome: AttachOutcome, deadlineAt: number, kind: 'oneshot' | 'session' = 'oneshot'): Promise<EngineLoss | undefined> {
    if (outcome.timedOut || outcome.aborted) {
      if (outcome.removal !== 'failed') return undefined; // removed on the timeout or abort, as always
    } else if (outcome.code !== 125 && outcome.code !== null) {
      return undefined;
    }
    // A session container runs on after its commands, so only the client's own words tell a
    // lost engine from a command that exited 125.
    if (kind === 'session' && outcome.code === 125 && !clientLostEngine(outcome.stderr)) return undefined;
    const clientEnded = !outcome.timedOut && !outcome.aborted;
    for (;;) {
      if (kind === 'oneshot' && clientEnded) {
        // The command's own 125 leaves an ended container (removed or being removed); a lost
        // client leaves it running.
        const state = await this.cli.call(['inspect', '--format', '{{.State.Status}}', name], 15_000);
        const status = state.code === 0 ? state.stdout.trim() : /No such (container|object)/i.test(state.stderr) ? 'gone' : undefined;
        if (status !== undefined && ['exited', 'dead', 'removing', 'gone'].includes(status)) return outcome.code === 125 ? undefined : 'stopped';
      }
      if (removedOrGone(await this.cli.call([...REMOVE_CONTAINER, name], 15_000))) return 'stopped';
      if (Date.now() > deadlineAt + SUPERVISE_SLACK_MS) return 'unconfirmed';
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /**
   * Opens a session container: one container kept running, pinned to the policy, profile and
   * identity it started with, into which {@link SessionContainer.exec} runs commands with
   * `docker exec`. For terminals; a timeout in it ends the whole session.
   */
  async openSession(request: SessionOpenRequest): Promise<SessionContainer> {
    validateRequest({ ...request, argv: ['true'], timeoutMs: 1 });
    const resolved = this.resolve(request.sandboxSpec);
    if (resolved.kind === 'local') throw unavailable('profile local has no container to keep open', 'use profile stdio or network for a session');
    const lifeMs = this.options.sessionMaxMs ?? DEFAULT_SESSION_MAX_MS;
    const opening: DockerRunRequest = { ...request, argv: ['true'], timeoutMs: 1 };
    // a detached run returns once the container has started: its mounts are in place
    const prepared = await this.setUpStill(opening, async (planned) => {
      const prepared = await planned(this.prepare(opening, resolved.profile, 'session', lifeMs));
      const args = dockerRunArgs({ ...prepared.args, interactive: false, detach: true, argv: ['sleep', String(prepared.args.deadlineSeconds)] });
      const started = await this.cli.call(args, 30_000, prepared.env);
      if (started.code !== 0) throw this.refused(started.stderr);
      return prepared;
    });
    return new SessionContainer(this, prepared.args.name, prepared.plan, request.env, resolved.profile);
  }

  /** Turns a `docker run` that failed before the command started into the error that says why. */
  refused(stderr: string): SandboxUnavailableError {
    this.preflightOk.clear();
    this.#probing = undefined;
    if (this.options.probeCache) void dropCachedProbe(this.options.probeCache);
    const first = stderr.trim().split('\n')[0] ?? '';
    if (missingDeadlineProgram(stderr)) {
      return unavailable(`the image has no timeout program, which enforces every container's own deadline (${first})`, 'use an image with busybox or coreutils (timeout on its PATH)');
    }
    const unusable = engineUnusable(stderr, this.cli.engine);
    return unusable ? unavailable(`${unusable.message} (${first})`, unusable.fix) : unavailable(`the engine refused the container (${first})`, 'check the image and the mounts named above on the engine host');
  }

  private resolve(spec: unknown): ResolvedProfile {
    try {
      return resolveProfile(spec ?? this.options.defaultSpec ?? { profile: 'stdio' });
    } catch (error) {
      const detail = error instanceof ZodError ? error.issues.map((i) => `${i.path.join('.') || 'sandbox'}: ${i.message}`).join('; ') : String(error);
      throw unavailable(`the tool's sandbox spec is invalid (${detail})`, 'fix the sandbox: block of the tool spec');
    }
  }

  /**
   * The {@link SandboxPlan} of a prepared one-shot container: the client binary and the `docker
   * run` argv, the env the client runs with (the container's variables reach it by name only).
   */
  private containerPlan(prepared: Awaited<ReturnType<DockerSandbox['prepare']>>, request: DockerRunRequest): SandboxPlan {
    const args = dockerRunArgs({ ...prepared.args, interactive: request.stdin !== undefined, argv: request.argv });
    const { plan } = prepared;
    return {
      backend: 'docker',
      argv: [this.cli.binary, ...args],
      env: { ...prepared.env, ...this.cli.clientEnv },
      mounts: plan.mounts.map((m) =>
        m.kind === 'bind'
          ? { target: m.path, mode: m.readOnly ? ('ro' as const) : ('rw' as const), source: m.path, why: 'the policy' }
          : { target: m.path, mode: 'hidden' as const, why: m.kind === 'mask-file' ? '/dev/null over a denied file' : 'an empty tmpfs over a denied directory' },
      ),
      files: [],
      pre: [{ step: 'image', detail: `${prepared.args.image} must be on the engine at ${this.cli.engine} (never pulled)` }],
      post: [
        { step: 'removal', detail: 'the container is removed when it ends, times out or is aborted; its own deadline kills it if this process cannot' },
        { step: 'denied writes', detail: `writes under the writable roots the mounts could not stop are undone${plan.writableRoots.length > 0 ? ` (${plan.writableRoots.join(', ')})` : ''}; stderr is read for refused writes` },
      ],
    };
  }

  private async prepare(request: DockerRunRequest, profile: ContainerProfile, kind: 'oneshot' | 'session', lifeMs: number, preview = false) {
    const plan = await this.mountPlan(request);
    const image = this.options.images[profile.image] ?? this.options.images.stdio;
    if (!preview) await this.preflight(image);
    const identity = await this.identityFor(request, profile, plan);
    const env = this.envFor(request.env, profile);
    if (!preview) containerCounter += 1;
    // a plan made without running has no container yet: its name and deadline are the run's
    const name = preview ? PLAN_RUN_DIR : `aalis-${this.options.instance}-${this.runId.slice(0, 8)}-${containerCounter}`.slice(0, 120);
    const deadlineSeconds = deadlineSecondsOf(lifeMs);
    const deadlineAt = Date.now() + deadlineSeconds * 1000;
    const args = {
      name,
      image,
      profile,
      plan,
      identity,
      network: profile.network === 'default' && request.policy.network === 'on' ? ('bridge' as const) : ('none' as const),
      cwd: plan.cwd,
      envNames: Object.keys(env),
      deadlineSeconds,
      labels: {
        ...this.options.labels,
        ...ownerLabels(),
        [LABELS.instance]: this.options.instance,
        [LABELS.run]: this.runId,
        [LABELS.kind]: kind,
        [LABELS.deadline]: preview ? PLAN_RUN_DIR : String(deadlineAt),
      },
    };
    return { plan, env, args, deadlineAt };
  }

  /** The container env of a request under a profile; a bad allow list refuses the run. */
  envFor(requestEnv: Readonly<Record<string, string>>, profile: ContainerProfile): Record<string, string> {
    return this.localEnv(requestEnv, profile.envAllow);
  }

  /** The request's env narrowed to the base allow list and `allow`; a bad allow list refuses the run. */
  private localEnv(requestEnv: Readonly<Record<string, string>>, allow: readonly string[]): Record<string, string> {
    try {
      return containerEnv(requestEnv, [...(this.options.envAllow ?? []), ...allow]);
    } catch (error) {
      throw unavailable(error instanceof ZodError ? (error.issues[0]?.message ?? 'bad env allow list') : (error as Error).message, 'fix the env allow list');
    }
  }

  /**
   * After a command (and after its container is known to be stopped): undo the writes the mounts
   * could not stop, and build the result. A run whose client lost the engine is reported as
   * killed, with a line on stderr saying what happened.
   */
  async finish(plan: MountPlan, outcome: AttachOutcome, lost?: EngineLoss, session?: string): Promise<DockerRunResult> {
    // The mounts could not stop these (the path did not exist, or only a pattern names it): found
    // by a walk of the writable roots, not bounded by walkLimit (what the command wrote is on the
    // host, and all of it is judged), and undone by their bytes (a name that is not UTF-8 has no
    // text that names it). The walk and the removal run with every container that can write there
    // held still, the session's own included (what a command left running there): one that moved
    // a landing from a folder the walk had not reached to one it had passed, and back, kept it.
    const { after, failedRemovals } = await this.sweepDenied(plan, session === undefined ? [] : [session]);
    const leaked = after.denied.map((w) => w.path);
    const reported = refusedWritesIn(outcome.stderr, plan.cwd, dockerRefusal(plan));
    const deniedWrites = [...new Set([...leaked, ...reported.paths])];
    const bySignal =
      outcome.timedOut || outcome.aborted || lost !== undefined ? 'SIGKILL' : outcome.code !== null && outcome.code > 128 ? SIGNAL_NAMES.get(outcome.code - 128) : undefined;
    const note =
      lost === 'stopped'
        ? `aalis: the docker client lost the engine at ${this.cli.engine} mid-run; the container was stopped and its writes were checked as after any run.\n`
        : lost === 'unconfirmed'
          ? `aalis: the docker client lost the engine at ${this.cli.engine} mid-run and it did not answer again; the container's own deadline has passed, and its writes were checked then. The run was unsupervised after the loss.\n`
          : '';
    // a folder the host's landings protect whole (an .envrc that cannot be read, say): why, where a write there was refused or removed
    const wholeNote = [...plan.protectedWhole]
      .filter(([folder]) => deniedWrites.some((path) => isWithin(path, folder)))
      .map(([folder, why]) => `aalis: ${folder}: the command may not write in it (rule: landing): ${why}\n`)
      .join('');
    const repositoryNotes = (after.notes ?? []).join('');
    const removalNote = failedRemovals.length > 0 ? `aalis: denied writes that could not be removed from the host (they are still there): ${failedRemovals.join(', ')}\n` : '';
    const unlistedNote =
      after.unlisted.length > 0
        ? `aalis: ${after.unlisted.length === 1 ? 'a directory' : `${after.unlisted.length} directories`} under the writable roots could not be listed after the run, so what is in them was not checked against the deny rules: ${after.unlisted.slice(0, 5).join(', ')}${after.unlisted.length > 5 ? ', …' : ''}\n`
        : '';
    return {
      ...(lost !== undefined ? { engineLost: lost } : {}),
      stdout: outcome.stdout.text(),
      stderr: outcome.stderr + note + unlistedNote + wholeNote + repositoryNotes + removalNote,
      exitCode: bySignal !== undefined ? null : outcome.code,
      signal: bySignal ?? null,
      timedOut: outcome.timedOut,
      truncated: outcome.stdout.truncated || outcome.stderrTruncated,
      writeDenied: reported.denied || deniedWrites.length > 0,
      deniedWrites,
      // what the walk removed is data, not a line on the command's stderr
      ...(leaked.length > 0 ? { movedAside: leaked.map((path) => ({ path, reason: 'deleted' as const })) } : {}),
    };
  }

  /**
   * Runs `fn` with every sandbox container on the engine that could move a path of `scope` held
   * still, and no other set-up or post-run check anywhere meanwhile (see hold-still.ts).
   */
  holdStill<T>(scope: StillScope, fn: (held: boolean) => Promise<T>): Promise<T> {
    return holdStill(this.engine, scope, fn);
  }

  /** Resolves once no other run is being set up or checked on the engine (see hold-still.ts). */
  untilNoSection(): Promise<void> {
    return untilNoSection(this.engine);
  }

  /**
   * What a command wrote where the policy denies it, found and removed from the host with the
   * containers that can write there (and `containers`) held still; nothing to do without writable roots.
   */
  async sweepDenied(plan: MountPlan, containers: readonly string[]): Promise<{ after: WritesAfter; failedRemovals: string[] }> {
    if (plan.writableRoots.length === 0) return { after: { denied: [], unlisted: [] }, failedRemovals: [] };
    return this.holdStill({ paths: plan.writableRoots, containers, evenUnheld: true }, async () => {
      // a one-shot run's container has stopped, so a new repository it made holds still while judged; a session's runs on
      const after = await deniedWritesAfter(plan, undefined, { newRepositories: containers.length === 0 });
      return { after, failedRemovals: await removeAll(after.denied) };
    });
  }

  /**
   * Runs a container's set-up (`fn`: plan, then start) held still: every container that writes on
   * the way to or under the request's roots, as given and as they resolve now, is paused. `fn`
   * passes its plan through `planned`, which checks that the roots the plan resolved are among
   * those: a root given through a symlink that a container writing elsewhere flipped between the
   * two resolutions (found by an attack: a masked `.env` read in 4 of 40 runs, a host folder bound
   * in 1 of 20) is set up again, and refused after {@link SETUP_TRIES} tries.
   */
  private async setUpStill<T>(request: Pick<DockerRunRequest, 'cwd' | 'policy'>, fn: (planned: <P extends { plan: MountPlan }>(prepared: Promise<P>) => Promise<P>) => Promise<T>): Promise<T> {
    const given = [request.cwd, ...request.policy.write, ...request.policy.readAllowWithin, ...(this.options.readRoots ?? [])];
    // what an attempt found moved is held the next time too: a link flipping between two places is then covered at both
    const known = new Set(given);
    for (let attempt = 1; ; attempt++) {
      for (const p of await Promise.all(given.map((p) => realpath(p).catch(() => p)))) known.add(p);
      const paths = [...known];
      const planned = async <P extends { plan: MountPlan }>(preparing: Promise<P>): Promise<P> => {
        const prepared = await preparing;
        const moved = prepared.plan.roots.filter((root) => !paths.includes(root));
        if (moved.length > 0) throw new RootsMovedError(moved);
        return prepared;
      };
      try {
        return await this.holdStill({ paths }, () => fn(planned));
      } catch (error) {
        if (!(error instanceof RootsMovedError)) throw error;
        for (const root of error.roots) known.add(root);
        if (attempt === SETUP_TRIES) {
          throw unavailable(
            `the run's roots kept resolving elsewhere while it was set up (${error.roots.join(', ')}): a symlink on the way was being swapped; nothing was run`,
            'run the command again; if it keeps happening, look for what rewrites the links on the way to the workspace',
          );
        }
      }
    }
  }

  /**
   * Resolves once the container `name` has started (its mounts are in place), ended, or its client
   * has; a set-up held still is released only then. Past {@link START_WAIT_MS} the container is
   * removed and the run refused: releasing while the engine may still resolve its mounts would
   * let a container that was held still move them.
   */
  private async untilStarted(name: string, attaching: Promise<unknown>): Promise<void> {
    let settled = false;
    const settle = () => {
      settled = true;
    };
    const done = attaching.then(settle, settle);
    const end = Date.now() + START_WAIT_MS;
    let poll = START_POLL_MS;
    while (!settled) {
      const state = await this.engine.stateOf(name).catch(() => 'unknown');
      if (['running', 'paused', 'exited', 'dead', 'removing'].includes(state)) return;
      if (Date.now() > end) {
        await this.cli.call([...REMOVE_CONTAINER, name]);
        await done;
        throw unavailable(`the container ${name} had not started after ${START_WAIT_MS / 1000} s (last state: ${state}); it was removed and nothing ran`, 'check the engine (docker info) and run the command again');
      }
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, poll))]);
      poll = Math.min(poll * 2, START_POLL_MAX_MS);
    }
  }

  private async mountPlan(request: DockerRunRequest): Promise<MountPlan> {
    try {
      const plan = await planMounts({
        policy: request.policy,
        cwd: request.cwd,
        readRoots: this.options.readRoots ?? [],
        neverMount: [...(this.options.neverMount ?? []), ...engineSocket(this.cli.clientEnv.DOCKER_HOST)],
        ...(this.options.walkLimit === undefined ? {} : { walkLimit: this.options.walkLimit }),
      });
      const confine = this.options.confineTo;
      if (confine !== undefined) {
        const outside = plan.mounts.find((m) => m.kind === 'bind' && !confine.some((root) => isWithin(m.path, root)));
        if (outside !== undefined) {
          throw new MountPolicyError('confine', `${outside.path} is outside this user's data directory`, "work inside the user's own workspace");
        }
      }
      return plan;
    } catch (error) {
      if (error instanceof MountPolicyError) throw unavailable(`${error.message} (rule: ${error.rule})`, error.fix);
      throw unavailable(`the policy could not be turned into mounts: ${(error as Error).message}`, 'check the paths of the policy exist and are readable');
    }
  }

  private async preflight(image: string): Promise<void> {
    const at = this.preflightOk.get(image);
    if (at !== undefined && Date.now() - at < PREFLIGHT_TTL_MS) return;
    const inspect = await this.cli.call(['image', 'inspect', '--format', '{{.Id}}', image]);
    if (inspect.code === 0) {
      this.preflightOk.set(image, Date.now());
      return;
    }
    const unusable = engineUnusable(inspect.stderr, this.cli.engine);
    if (unusable) throw unavailable(unusable.message, unusable.fix);
    throw unavailable(`the image ${image} is not on the engine at ${this.cli.engine}`, `build or load ${image} there; nothing is pulled from a registry`);
  }

  private async identityFor(request: DockerRunRequest, profile: ContainerProfile, plan: MountPlan): Promise<ContainerIdentity> {
    if (profile.identity === 'host') {
      // 002: without CAP_DAC_OVERRIDE the builder writes its build directory as its owner.
      const dir = plan.writableRoots[0] ?? request.cwd;
      const owner = await stat(dir);
      return { kind: 'host', uid: owner.uid, gid: owner.gid };
    }
    const wanted = request.identity ?? (readOnlyPolicy(request.policy) ? 'restricted' : 'owner');
    if (wanted === 'restricted') return { kind: 'restricted' };
    const owner = this.options.owner ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    return { kind: 'host', ...owner };
  }

  /**
   * Runs a client command attached, feeding stdin and keeping bounded output; on timeout or abort
   * the container `name` is killed and removed, and its removal awaited before this resolves.
   */
  attach(name: string, args: string[], env: Record<string, string>, request: AttachRequest, timeoutMs: number): Promise<AttachOutcome> {
    return attachClient(this.cli, name, args, env, request, timeoutMs, request.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES);
  }

  /** Ids of this instance's containers on the engine, running or not. */
  async containers(): Promise<string[]> {
    const list = await this.cli.call(['ps', '--all', '--quiet', '--no-trunc', ...this.instanceFilter]);
    if (list.code !== 0) throw unavailable(`cannot list containers at ${this.cli.engine}: ${list.stderr.trim()}`, 'start the engine');
    return list.stdout.split('\n').filter((line) => line.trim() !== '');
  }

  /** Ids of this instance's containers that this process started (its own runs and sessions). */
  async ownContainers(): Promise<string[]> {
    const list = await this.cli.call(['ps', '--all', '--quiet', '--no-trunc', ...this.instanceFilter, '--filter', `label=${LABELS.run}=${this.runId}`]);
    if (list.code !== 0) throw unavailable(`cannot list containers at ${this.cli.engine}: ${list.stderr.trim()}`, 'start the engine');
    return list.stdout.split('\n').filter((line) => line.trim() !== '');
  }

  /**
   * Removes this instance's orphans: containers of another process run whose owner is provably
   * dead (same machine, boot and pid namespace, no process with that pid and start time), or
   * whose own deadline has passed. A container of a live owner, or of an owner this machine
   * cannot judge (another host), is left alone. Call it at start; returns how many it removed.
   */
  async reapOrphans(): Promise<number> {
    const list = await this.cli.call(['ps', '--all', '--no-trunc', '--format', REAP_FORMAT, ...this.instanceFilter]);
    if (list.code !== 0) throw unavailable(`cannot list containers at ${this.cli.engine}: ${list.stderr.trim()}`, 'start the engine');
    const orphans = orphansIn(list.stdout, this.runId);
    if (orphans.length > 0) await this.cli.call([...REMOVE_CONTAINER, ...orphans]);
    return orphans.length;
  }
}

/** Whole seconds of a container's own deadline: the caller's time plus a grace, so the host-side kill comes first. */
function deadlineSecondsOf(lifeMs: number): number {
  return Math.ceil(lifeMs / 1000) + DEADLINE_GRACE_S;
}

/** The socket DOCKER_HOST names, when it is a local unix socket: never mounted either. */
function engineSocket(host: string | undefined): string[] {
  return host?.startsWith('unix://') ? [host.slice('unix://'.length)] : [];
}
