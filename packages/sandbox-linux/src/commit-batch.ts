import { readdirSync } from 'node:fs';
import type { SandboxPolicy } from '@aalis/api-reach';
import { commitSince, type RunStart, type Since } from './commit-conflicts.js';
import { wallMinusMonotonic } from './clock-steps.js';
import type { OverlayRoot } from './overlay-mount.js';
import { type CommitReport, commitUpper } from './upper-commit.js';
import { withLandingLinks } from './landing-links.js';
import { isWithin } from './rule-match.js';
import { policyEvaluatorOf } from './policy-evaluator.js';

/*
 * The commit of every upper layer of a run as one job of the host thread (host-thread.ts), in the
 * order of its roots, each root on its own as before: a root that throws is reported failed and
 * the next one is committed. One message there and back for the run instead of one per writable
 * root (ten a run in the daemon bench's deployment): each hop waits for both threads to be
 * scheduled. Measured there: a root with nothing written takes 0.1-0.3 ms on the thread, the ten
 * hops 8-20 ms of the call at a load of 3-6.
 */

/**
 * The run's clock as the commit reads it per root (clock-steps.ts): `since` is taken again before
 * each root from the wall clock less the monotonic one, read on the thread that commits (the same
 * clocks as the daemon's thread), so a step back during the commit counts for the roots after it,
 * as it did when each root was a job of its own.
 */
export interface CommitClock {
  readonly start: RunStart;
  /** The wall clock less the monotonic one when the run started (ns). */
  readonly offsetAtStart: bigint;
  /** The largest step back seen up to the batch (ns, 0n for none). */
  readonly stepBack: bigint;
}

/** One batch: the run's roots, the clock the roots' `since` comes from, or none (the commit then compares no stamps). */
export interface CommitBatch {
  readonly policy: SandboxPolicy;
  readonly overlays: readonly OverlayRoot[];
  readonly mountPoints: readonly string[];
  readonly clock?: CommitClock;
  /** A `since` fixed for every root (a clock other than this process's: tests), when `clock` is not given. */
  readonly since?: Since;
  readonly aside?: string;
  /** Paths that may be landing symlinks (landing-links.ts): what they resolve through is protected in this commit. */
  readonly landingLinks?: readonly string[];
}

/** Each root's report, or why it could not be committed at all; and the lowest clock offset read (for the run's window). */
export interface CommitBatchReport {
  readonly roots: readonly ({ readonly ok: true; readonly report: CommitReport } | { readonly ok: false; readonly message: string })[];
  readonly lowestOffset?: bigint;
}

/** Commits every root of `batch` in order (upper-commit.ts), each root's failure its own. */
export function commitBatch(batch: CommitBatch): CommitBatchReport {
  const mountPoints = new Set(batch.mountPoints);
  // read from the host now: the command wrote only into its layers, so the links are as the run found them
  const judged = policyEvaluatorOf(batch.policy);
  // (only when the command wrote anything: a run that wrote nothing commits nothing to judge)
  const wrote = batch.overlays.some((o) => {
    try {
      return readdirSync(o.upper).length > 0;
    } catch {
      return true; // cannot tell: judged as if it did
    }
  });
  // folders an .envrc protects whole (what it loads cannot be told): said where a write there was refused
  const wholly = new Map<string, string>();
  const policy = wrote ? withLandingLinks(batch.policy, batch.landingLinks ?? [], (p) => !judged.writable(p) || judged.hidden(p), (folder, why) => wholly.set(folder, why)) : batch.policy;
  let lowest: bigint | undefined;
  const roots = batch.overlays.map((overlay) => {
    let since = batch.since;
    if (batch.clock) {
      const offset = wallMinusMonotonic();
      if (lowest === undefined || offset < lowest) lowest = offset;
      const back = batch.clock.offsetAtStart - offset;
      // biome-ignore lint/complexity/useMathMinMax: bigints (Math.max takes numbers only)
      since = commitSince(batch.clock.start, back > batch.clock.stepBack ? back : batch.clock.stepBack);
    }
    try {
      const report = commitUpper(policy, overlay, mountPoints, since, undefined, batch.aside);
      const said = [...wholly].filter(([folder]) => report.refused.some((p) => isWithin(p, folder))).map(([folder, why]) => `aalis: ${folder}: nothing the command wrote in it was committed (rule: landing): ${why}, and direnv runs what it loads at the next cd there; name the files plainly in the .envrc, or write them yourself\n`);
      return { ok: true as const, report: said.length === 0 ? report : { ...report, notes: [...report.notes, ...said] } };
    } catch (e) {
      return { ok: false as const, message: (e as Error).message };
    }
  });
  return { roots, ...(lowest === undefined ? {} : { lowestOffset: lowest }) };
}
