import type { SandboxCheck, SandboxPolicy } from '@aalis/api-reach';
import { AalisError, hasRawBytes, printablePath } from '@aalis/core';
import { readFileSync } from 'node:fs';
import { findOverlayTools, overlayConflict, type HostModel, innerIdArgs, mountOperands, type OverlayRoot, type OverlayTools, overlayRefusal, overlayRootsOf, overlayStep, planOverlays, prepareAliases, prepareLayers, probeOverlay, type SocketBind, socketBinds } from './overlay-mount.js';
import type { CommitConflictEntry } from '@aalis/api-reach';
import type { CommitReport } from './upper-commit.js';
import { commitSince, markRunStart, type RunStart, type Since } from './commit-conflicts.js';
import { type ClockStepWatch, clockSteps, type StepWindow } from './clock-steps.js';
import type { CommitBatch, CommitBatchReport } from './commit-batch.js';
import { beginCommit, endCommit } from './commit-journal.js';
import type { LinuxErrorCode } from './linux-error-codes.js';

/*
 * The overlay model within one run (service.ts calls these): which model a run gets, the step
 * before bwrap, and the commit after the command.
 */

/** The probe check that says which host model runs use, and why. */
export const HOST_MODEL_CHECK = 'host-model';

/** Which model a run gets: the overlay (with its tools), or the look and why. */
export type ModelChoice = { readonly kind: 'overlay'; readonly tools: OverlayTools } | { readonly kind: 'look'; readonly reason: string; readonly fix?: string };

/**
 * The model for a policy: `look` when asked for; otherwise the overlay where the probe mounted one
 * and every write root can be one. A policy that cannot get the overlay under `overlay` throws
 * (the caller fails the run closed); under `auto` it falls back to the look, with the reason.
 */
export async function chooseModel(model: HostModel, policy: SandboxPolicy, tmp: string, unshare?: string): Promise<ModelChoice> {
  if (model === 'look') return { kind: 'look', reason: 'the look-based model was chosen in the settings (hostModel: look)' };
  const probe = await probeOverlay(tmp, unshare);
  const tools = findOverlayTools(unshare);
  const roots = overlayRootsOf(policy);
  const refusal = roots.map(overlayRefusal).find((r) => r !== undefined) ?? mountConflict(roots, tmp);
  const reason = !probe.ok ? probe.detail : !tools ? 'unshare or mount is gone' : refusal;
  if (reason === undefined && tools) return { kind: 'overlay', tools };
  const choice: ModelChoice = { kind: 'look', reason: reason ?? 'no overlay', ...(probe.fix ? { fix: probe.fix } : {}) };
  if (model === 'overlay') throw new OverlayRequiredError(choice.reason, choice.fix ?? 'set hostModel to auto or look, or fix what the reason names');
  return choice;
}

/** {@link overlayConflict} against this process's mount table; one that cannot be read is a conflict (nothing could be checked). */
function mountConflict(roots: readonly string[], tmp: string): string | undefined {
  let mountinfo: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch (e) {
    return `the mount table could not be read (${(e as Error).message}), so mounts under the writable roots could not be checked`;
  }
  return overlayConflict(roots, tmp, mountinfo);
}

/** The policy asks for the overlay (hostModel: overlay) and this run cannot have it: nothing runs. */
export class OverlayRequiredError extends AalisError<LinuxErrorCode> {
  declare readonly fix: string;
  constructor(
    readonly reason: string,
    fix: string,
  ) {
    super('overlay-required', `writes must be captured in an overlay here (hostModel: overlay), and cannot be: ${reason}`, { fix });
  }
}

/** The check `probe()` adds for `doctor`: which model runs use, and why. Advisory under `auto` (the look still holds, later). */
export async function hostModelCheck(model: HostModel, tmp: string, unshare?: string): Promise<SandboxCheck> {
  if (model === 'look') return { name: HOST_MODEL_CHECK, ok: true, detail: 'look-based (chosen in the settings): new landings are undone after the command, not prevented' };
  const probe = await probeOverlay(tmp, unshare);
  if (probe.ok) return { name: HOST_MODEL_CHECK, ok: true, detail: `overlay: ${probe.detail}` };
  const detail = model === 'overlay' ? `overlay required (hostModel: overlay) but unavailable, so every run fails closed: ${probe.detail}` : `look-based, because ${probe.detail}`;
  return { name: HOST_MODEL_CHECK, ok: false, detail, ...(probe.fix ? { fix: probe.fix } : {}) };
}

/** bwrap under the overlays' mount step: the root map's step when given (it mounts them), else the shell step (overlay-mount.ts). */
export function overlayLaunch(
  tools: OverlayTools,
  overlays: readonly OverlayRoot[],
  binds: readonly SocketBind[],
  bwrap: string,
  bwrapArgs: readonly string[],
  rootMap?: (mounts: readonly string[]) => string[],
): string[] {
  const step = rootMap ? rootMap(mountOperands(overlays, binds)) : overlayStep(tools, overlays, binds);
  return [...step, bwrap, ...innerIdArgs(), ...bwrapArgs];
}

/** One run's overlays. */
export class RunOverlays {
  readonly overlays: readonly OverlayRoot[];

  private readonly binds: readonly SocketBind[];

  /** bwrap arguments that hide the daemon's temp directory inside the sandbox (daemon-tmp.ts). */
  hideArgs: readonly string[] = [];

  private start?: RunStart;

  private window?: StepWindow;

  /** When the run started (ns, the file systems' clocks) as the commit compares against it now, once {@link markStart} was called. */
  get since(): Since | undefined {
    return this.start === undefined || this.window === undefined ? undefined : commitSince(this.start, this.window.stepBack());
  }

  /** The run's overlays with their layers' directories made ({@link prepareLayers}); arguments as the constructor's. */
  static async create(tools: OverlayTools, policy: SandboxPolicy, layersDir: string, sockets: readonly string[], clock: ClockStepWatch = clockSteps, layers?: Promise<void>): Promise<RunOverlays> {
    const made = new RunOverlays(tools, policy, layersDir, sockets, clock);
    await (layers ?? prepareLayers(made.overlays));
    await prepareAliases(made.overlays, made.binds);
    return made;
  }

  /**
   * The layer directories of `policy`'s roots under `layersDir`, made now: they depend on the
   * policy alone, so a cold run makes them while its scan runs and hands the promise to
   * {@link RunOverlays.create}.
   */
  static makeLayers(policy: SandboxPolicy, layersDir: string): Promise<void> {
    return prepareLayers(planOverlays(overlayRootsOf(policy), layersDir));
  }

  /**
   * `sockets`: the host's bound sockets (the scan's), those inside an overlay root bound back.
   * `clock`: where steps of the wall clock are watched (tests give their own). Makes no
   * directory: {@link RunOverlays.create} does.
   */
  constructor(
    private readonly tools: OverlayTools,
    policy: SandboxPolicy,
    layersDir: string,
    sockets: readonly string[],
    private readonly clock: ClockStepWatch = clockSteps,
  ) {
    this.overlays = planOverlays(overlayRootsOf(policy), layersDir);
    // a name that is not UTF-8 cannot be an argv string; such a socket stays unreachable (stricter)
    this.binds = socketBinds(this.overlays, sockets.filter((p) => !hasRawBytes(p)));
    this.layersDir = layersDir;
  }

  private readonly layersDir: string;

  /** Stamps the run's start, just before the command starts: host entries changed after it are never replaced by the commit. */
  markStart(): void {
    // the window first: a step of the clock while the stamps are made is seen too
    this.window = this.clock.open();
    this.start = markRunStart(
      this.layersDir,
      this.overlays.map((o) => o.root),
    );
  }

  /** Keeps watching the clock for a later commit (the run's refused writes are kept for an answer: kept-writes.ts). */
  keepWatching(): void {
    this.window?.resume();
  }

  /** Stops watching the clock for this run (its layers are gone). */
  stopWatching(): void {
    this.window?.pause();
  }

  /** The argv that runs bwrap under the mount step: `rootMap`, given the mount operands, is the root map's step, which mounts them itself (root-map.ts). */
  command(bwrap: string, bwrapArgs: readonly string[], rootMap?: (mounts: readonly string[]) => string[]): string[] {
    return overlayLaunch(this.tools, this.overlays, this.binds, bwrap, bwrapArgs, rootMap);
  }

  /**
   * Judges and commits every upper layer, after the command has ended, each by `run` (the host
   * thread: a large commit does not stop the daemon answering). Refused entries are the run's
   * refused writes, by their exact paths. A root that cannot be committed at all is refused whole and said.
   */
  async commit(run: (o: OverlayRoot) => Promise<CommitReport>): Promise<OverlayCommit> {
    beginCommit(this.layersDir);
    const roots: RootOutcome[] = [];
    for (const o of this.overlays) {
      try {
        roots.push({ ok: true, report: await run(o) });
      } catch (e) {
        roots.push({ ok: false, message: (e as Error).message });
      }
    }
    return this.gathered(roots);
  }

  /**
   * {@link commit} with every root in one job of `runAll` (commit-batch.ts: one hop to the host
   * thread for the run). The batch reads the clock before each root itself where this run watches
   * the process's clock; with another watch (tests) it is given `since` as of now for every root.
   */
  async commitAll(runAll: (batch: Pick<CommitBatch, 'overlays' | 'clock' | 'since'>) => Promise<CommitBatchReport>): Promise<OverlayCommit> {
    beginCommit(this.layersDir);
    let report: CommitBatchReport;
    try {
      const clock = this.clock === clockSteps && this.start !== undefined && this.window !== undefined ? { start: this.start, offsetAtStart: this.window.start, stepBack: this.window.stepBack() } : undefined;
      const since = clock === undefined ? this.since : undefined;
      report = await runAll({ overlays: this.overlays, ...(clock ? { clock } : {}), ...(since ? { since } : {}) });
    } catch (e) {
      report = { roots: this.overlays.map(() => ({ ok: false as const, message: (e as Error).message })) };
    }
    if (report.lowestOffset !== undefined) this.window?.see(report.lowestOffset);
    return this.gathered(report.roots);
  }

  /** The run's commit from each root's outcome, in the order of the roots; the commit's journal closed. */
  private gathered(roots: readonly RootOutcome[]): OverlayCommit {
    const committed: string[] = [];
    const refused: string[] = [];
    const conflicts: CommitConflictEntry[] = [];
    const failed: string[] = [];
    let notes = '';
    this.overlays.forEach((o, i) => {
      const r = roots[i] ?? { ok: false as const, message: 'the host thread gave no answer for it' };
      if (!r.ok) {
        failed.push(o.root);
        notes += `aalis: nothing the command wrote under ${o.root} was committed: ${r.message}\n`;
        return;
      }
      const { report } = r;
      committed.push(...report.committed);
      refused.push(...report.refused);
      conflicts.push(...report.conflicts.map((path) => (report.keptAt[path] === undefined ? { path } : { path, keptAt: report.keptAt[path]! })));
      failed.push(...report.failed);
      notes += report.notes.join('');
    });
    endCommit(this.layersDir);
    this.window?.pause(); // kept writes resume it (keepWatching)
    if (failed.length > 0) notes += `aalis: writes the policy allows could not be committed (not on the host; see above): ${failed.map(printablePath).join(', ')}\n`;
    return { committed, refused, conflicts, failed, notes };
  }
}

/** What a run's commit did, over every root. */
export interface OverlayCommit {
  readonly committed: string[];
  readonly refused: string[];
  readonly conflicts: CommitConflictEntry[];
  readonly failed: string[];
  readonly notes: string;
}

/** One root's commit: its report, or why nothing under it was committed. */
type RootOutcome = { readonly ok: true; readonly report: CommitReport } | { readonly ok: false; readonly message: string };
