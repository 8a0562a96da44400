import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';

/*
 * `docker pause` is the kernel's cgroup freezer reached through the engine, containerd and a runc
 * process: about 30 ms a call here, and a writable session's command pays four (a pause and an
 * unpause in its pre-command sweep and in its check). A daemon that may write the container's
 * freezer (root, the engine's own cgroup layout) writes it itself: the same kernel mechanism, about
 * a millisecond. Anything else (another user, rootless docker, a custom cgroup parent, a remote
 * engine) is asked of the engine, as before.
 *
 * The engine does not know of a freeze made here: an exec into such a container is refused by
 * runc ("cannot exec in a paused container"), which a session treats like the engine's "is
 * paused" (session-container.ts), and a freeze left by a holder that died is found by reading the
 * freezer of every running sandbox container under the lock (hold-still.ts).
 */

/** How long a freeze may take to reach every process (the kernel freezes them one by one). */
const FREEZE_WAIT_MS = 2_000;

/** Where one container's freezer is, in the layout the engine made it with. */
type Freezer = { readonly kind: 'v1'; readonly state: string } | { readonly kind: 'v2'; readonly freeze: string; readonly events: string };

/** A full container id: nothing else names a freezer path. */
const CONTAINER_ID = /^[0-9a-f]{64}$/;

/** Whether a freeze reached every process: `frozen`, or `engine` when this process cannot write it (the engine is asked then). */
export type FreezeOutcome = 'frozen' | 'engine';

/** The container freezer written directly where this process may (see the file's comment). */
export class CgroupFreezer {
  /** `root`: the cgroup file system's mount point (tests point it elsewhere). */
  constructor(private readonly root = '/sys/fs/cgroup') {}

  /** The container's freezer files where the engine's cgroupfs or systemd driver put them (v1 and v2), or undefined. */
  private locate(id: string): Freezer | undefined {
    if (!CONTAINER_ID.test(id)) return undefined;
    for (const dir of [`freezer/docker/${id}`, `freezer/system.slice/docker-${id}.scope`]) {
      const state = `${this.root}/${dir}/freezer.state`;
      if (readable(state)) return { kind: 'v1', state };
    }
    for (const dir of [`docker/${id}`, `system.slice/docker-${id}.scope`]) {
      const freeze = `${this.root}/${dir}/cgroup.freeze`;
      if (readable(freeze)) return { kind: 'v2', freeze, events: `${this.root}/${dir}/cgroup.events` };
    }
    return undefined;
  }

  /**
   * Freezes every process of the container, and resolves once the kernel says all are frozen;
   * `engine` when it cannot be written here or did not freeze in time (it is thawed again then,
   * and the caller asks the engine, which fails closed).
   */
  async freeze(id: string): Promise<FreezeOutcome> {
    const at = this.locate(id);
    if (at === undefined) return 'engine';
    if (!write(at.kind === 'v1' ? at.state : at.freeze, at.kind === 'v1' ? 'FROZEN' : '1')) return 'engine';
    const end = Date.now() + FREEZE_WAIT_MS;
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      if (isFrozen(at)) return 'frozen';
      if (Date.now() > end) {
        this.thaw(id);
        return 'engine';
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Thaws the container; false when its freezer could not be written here (the engine is asked then). */
  thaw(id: string): boolean {
    const at = this.locate(id);
    return at !== undefined && write(at.kind === 'v1' ? at.state : at.freeze, at.kind === 'v1' ? 'THAWED' : '0');
  }

  /** Whether the kernel holds the container frozen or freezing, whoever asked it (false where its freezer is not found). */
  frozen(id: string): boolean {
    const at = this.locate(id);
    if (at === undefined) return false;
    try {
      return at.kind === 'v1' ? readFileSync(at.state, 'utf8').trim() !== 'THAWED' : readFileSync(at.freeze, 'utf8').trim() === '1';
    } catch {
      return false;
    }
  }
}

function isFrozen(at: Freezer): boolean {
  try {
    return at.kind === 'v1' ? readFileSync(at.state, 'utf8').trim() === 'FROZEN' : /^frozen 1$/m.test(readFileSync(at.events, 'utf8'));
  } catch {
    return false;
  }
}

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

/** One write of a cgroup control file; false when this process may not (EACCES, EROFS) or the kernel refused. */
function write(path: string, value: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_TRUNC);
  } catch {
    return false;
  }
  try {
    writeSync(fd, value);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
