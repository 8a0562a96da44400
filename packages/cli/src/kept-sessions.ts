import { createHmac, randomBytes } from 'node:crypto';
import { rmdirSync } from 'node:fs';
import { dirname } from 'node:path';

/*
 * A one-shot `aalis exec` runs in a session of its own (`cli-<pid>-<time>`), whose temp
 * (`<data>/tmp/<2 hex>/session-…`, the command's TMPDIR) is in its policy. Through the exec helper
 * that made every run's policy new, so the sandbox the helper's service prepares ahead for a policy
 * that recurs (sandbox-linux `prepare`) was never prepared: each run set its sandbox up cold. The
 * helper's runs take their session from here instead: the same for the same directory, flags, data
 * directory and environment while the helper lives, so the next run of the same command shape finds
 * its sandbox ready. A run of another shape gets another session and another temp; nothing of a
 * session is shared beyond its shape, and the helper serves one request at a time, so two runs never
 * hold one session at once. The temps are kept while the helper lives (an empty one removed and made
 * again would be another directory, and the prepared sandbox, bound to the old one, would be thrown
 * away at its release: prepared.ts `identityPaths`), and those left empty are removed when it stops.
 *
 * A session is more than its temp: an answer "remember for this session" at the terminal is a grant
 * of the session, kept in the data directory's grants (plugin-approval). A one-shot run's grant
 * never met another run; a kept session's would answer the next runs of its shape. So a session
 * that holds a grant when its run ends (or whose grants cannot be read) is retired: the next run
 * of that shape gets a new session, and the grant stays with the one run it was given in, as before.
 *
 * And a temp is state a command leaves for the next: bytecode under PYTHONPYCACHEPREFIX (which
 * points into it) is run by the next python of the shape. Where the workspace is writable a command
 * can leave the same there (a `json.py` beside the next command) in one-shot runs too, so sharing
 * the temp between runs of one reach adds nothing; the reach must be the same, so the backend and
 * `--network` are of the shape (an attack planted code in an offline run that a networked one ran).
 * Under `readonly` the temp is the only thing a run can leave, and a one-shot's was never given to
 * another run: a readonly session whose temp is not empty when its run ends is retired too.
 */

/** What decides a run's reach, so what names its kept session. */
export interface SessionShape {
  readonly cwd: string;
  readonly tier: string;
  readonly boundary: string;
  readonly allowWrite: readonly string[];
  readonly dataDir: string;
  /** The backend and `--network` as given (undefined: the tier's own): each changes the sandbox the command runs in. */
  readonly backend: string;
  readonly network: string | undefined;
}

/**
 * How long a kept session's temp may go unused before, if empty, it is removed while the helper
 * runs on: past the time a sandbox prepared for it waits (sandbox-linux, 30 s), so its removal
 * costs no prepared sandbox. Without it a helper never idle, serving a harness that changes one
 * variable per call, kept one empty temp per call until it ended.
 */
export const SESSION_TEMP_IDLE_MS = 60_000;

/** The sessions of one exec helper, one per {@link SessionShape} and environment. */
export class KeptSessions {
  // each temp noted, with when its run ended
  private readonly temps = new Map<string, number>();

  // the names hold a digest of the environment (secrets among it): keyed, so no guess of a value can be checked against a name
  private readonly key = randomBytes(32);

  // sessions retired (a grant in them), by their shape's digest: the next of the shape is numbered past them
  private readonly generations = new Map<string, number>();

  /** `seed`: what tells this helper's sessions from any other process's (its pid and start). */
  constructor(private readonly seed = `${process.pid}-${Date.now()}`) {}

  /** The session for a run of `shape` in this process's environment now (the request's, in the helper). */
  idFor(shape: SessionShape, env: NodeJS.ProcessEnv = process.env): string {
    const vars = Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const digest = createHmac('sha256', this.key).update(JSON.stringify([shape.cwd, shape.tier, shape.boundary, [...shape.allowWrite].sort(), shape.dataDir, shape.backend, shape.network ?? null, vars])).digest('hex').slice(0, 24);
    return `cli-${this.seed}-${digest}-${this.generations.get(digest) ?? 0}`;
  }

  /** Never gives `id` again: the next run of its shape gets a new session (one that holds a grant). */
  retire(id: string): void {
    const m = /^cli-.+-([0-9a-f]{24})-(\d+)$/.exec(id);
    if (m === null) return;
    const [, digest, generation] = m as unknown as [string, string, string];
    if ((this.generations.get(digest) ?? 0) <= Number(generation)) this.generations.set(digest, Number(generation) + 1);
  }

  /**
   * Notes a session's temp as used by a run that ended `now`, removed at {@link dropEmpty} if
   * nothing is left in it; the empty ones unused for {@link SESSION_TEMP_IDLE_MS} are removed now.
   */
  keep(sessionTmp: string, now = Date.now()): void {
    this.temps.delete(sessionTmp); // the most recently used last
    this.temps.set(sessionTmp, now);
    for (const [tmp, used] of this.temps) {
      if (now - used < SESSION_TEMP_IDLE_MS) break;
      dropEmptySessionTmp(tmp);
      this.temps.delete(tmp);
    }
  }

  /** Removes each noted temp that is empty, and its shard when that is empty too (rmdir: never what a command left, never through a symlink). */
  dropEmpty(): void {
    for (const tmp of this.temps.keys()) dropEmptySessionTmp(tmp);
    this.temps.clear();
  }
}

/**
 * Removes a session's temp if it is empty, and its shard (`<data>/tmp/<2 hex>`) if that is then
 * empty too: rmdir, so never what a command left there (the run's note says it is kept), and never
 * through a symlink (rmdir of one fails). Anything else (not empty, gone): left as it is.
 */
export function dropEmptySessionTmp(sessionTmp: string): void {
  try {
    rmdirSync(sessionTmp);
    rmdirSync(dirname(sessionTmp));
  } catch {
    // not empty (kept, as the run said), or gone
  }
}
