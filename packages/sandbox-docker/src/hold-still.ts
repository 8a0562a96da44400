import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { engineUnusable } from './docker-cli.js';
import type { EngineApi, EngineContainer, HeldBy } from './engine-api.js';
import { withHoldLock } from './hold-lock.js';
import { LABELS } from './labels.js';
import { isWithin } from './rule-match.js';

/** What a section must not see move: paths, and containers named outright (a session's own). */
export interface StillScope {
  /** Real paths the section resolves (a plan's roots, a walk's roots). */
  readonly paths: readonly string[];
  /** Containers held still whatever they can write. */
  readonly containers?: readonly string[];
  /**
   * A post-run check: when the engine cannot list its containers (lost mid-run), `fn` runs all the
   * same, with nothing held (undoing a command's denied writes matters more than holding others),
   * and `held` says so. A set-up is refused instead.
   */
  readonly evenUnheld?: boolean;
}

/** How often a running container the engine would not pause is asked again. */
const PAUSE_TRIES = 4;

/** How long a section waits for another process's section to end before it refuses. */
const LOCK_WAIT_MS = 120_000;

/**
 * The paths a container can write, as its label says (its writable mounts, written when it was
 * made); undefined when it has none (made by an older version): it is then held whatever it can write.
 */
function writableOf(container: EngineContainer): string[] | undefined {
  const label = container.labels[LABELS.writable];
  if (label === undefined) return undefined;
  try {
    const parsed = JSON.parse(label) as unknown;
    return Array.isArray(parsed) && parsed.every((p) => typeof p === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a container that writes `writable` can move a path on the way to, or under, one of `paths`. */
export function writesInto(writable: readonly string[] | undefined, paths: readonly string[]): boolean {
  if (writable === undefined) return true;
  return writable.some((w) => paths.some((p) => isWithin(p, w) || isWithin(w, p)));
}

/**
 * Runs `fn` with every sandbox container that could move a path of `scope` frozen (the cgroup
 * freezer: written here where this process may, `docker pause` otherwise; cgroup-freezer.ts), and
 * with no other process's section running meanwhile (the engine's hold lock, {@link withHoldLock}).
 * The engine resolves a bind's source on the host and a mask's target through the new container's
 * root when it starts a container; a sandboxed command in another container of the same workspace
 * that swapped a folder on that path for a symlink got the next container the host's `/root`
 * read-write, the engine socket, or a masked `.env` unmasked (found by an attack: a third to a half
 * of runs). Nothing of a frozen container runs, so what the section planned is what the engine
 * resolves. Every hold is made under the lock and undone before it is released, so a container
 * found paused (or frozen while the engine says it runs) was left so by a section whose process
 * died: it is let run again at the end, as the held ones are. A container that cannot be frozen
 * while it runs refuses the section (fail closed).
 */
export async function holdStill<T>(engine: EngineApi, scope: StillScope, fn: (held: boolean) => Promise<T>): Promise<T> {
  let name: string;
  try {
    name = await lockName(engine);
  } catch (error) {
    // the engine does not answer: nothing can be held, as when it cannot list its containers below
    if (scope.evenUnheld) return fn(false);
    throw error;
  }
  return withHoldLock(name, LOCK_WAIT_MS, async () => {
    let containers: EngineContainer[];
    try {
      containers = await engine.sandboxContainers();
    } catch (error) {
      if (scope.evenUnheld) return fn(false);
      const unusable = engineUnusable((error as Error).message, engine.cli.engine);
      if (unusable) throw new SandboxUnavailableError('docker', `${unusable.message}; nothing was run`, unusable.fix);
      throw new SandboxUnavailableError('docker', `cannot list the sandbox containers that could move this run's paths (${(error as Error).message}); nothing was run`, 'start the engine, or check DOCKER_HOST');
    }
    const named = new Set(scope.containers ?? []);
    const toFreeze = containers.filter((c) => c.state === 'running' && (named.has(c.name) || named.has(c.id) || writesInto(writableOf(c), scope.paths)));
    const leftPaused = containers.filter((c) => c.state === 'paused');
    // frozen by a holder that died without the engine knowing (cgroup-freezer.ts)
    const leftFrozen = containers.filter((c) => engine.frozenUnknown(c));
    const held: { readonly id: string; readonly by: HeldBy }[] = [];
    try {
      for (const container of toFreeze) {
        let paused = await engine.hold(container.id);
        let state = 'running';
        // a refusal while the engine was busy with the container (seen once in a few dozen runs
        // under load) is tried again while it still runs
        for (let tries = 1; !paused.ok && tries < PAUSE_TRIES; tries++) {
          state = await engine.stateOf(container.id).catch(() => 'unknown');
          if (state !== 'running' && state !== 'unknown') break;
          await new Promise((resolve) => setTimeout(resolve, 20 * tries));
          paused = await engine.hold(container.id);
        }
        if (paused.ok) {
          held.push({ id: container.id, by: paused.by });
          continue;
        }
        // ended meanwhile: nothing of it runs any more
        state = await engine.stateOf(container.id).catch(() => 'unknown');
        if (['exited', 'dead', 'gone', 'removing', 'paused'].includes(state)) continue;
        throw new SandboxUnavailableError(
          'docker',
          `the sandbox container ${container.name} can write where this run's mounts are resolved and could not be held still (${paused.why}); nothing was run`,
          'run the command again once that container has ended, or check that the engine can pause containers (the cgroup freezer)',
        );
      }
      return await fn(true);
    } finally {
      for (const { id, by } of held) await engine.release(id, by);
      for (const container of leftPaused) await engine.unpause(container.id);
      for (const container of leftFrozen) if (!held.some((h) => h.id === container.id)) engine.thawFrozen(container.id);
    }
  });
}

/**
 * Resolves once no section is running on the engine (none of this machine's): a `docker exec`
 * into a session container that a section holds paused fails ("is paused"), so a session's
 * command waits for the section to end first.
 */
export async function untilNoSection(engine: EngineApi): Promise<void> {
  return withHoldLock(await lockName(engine), LOCK_WAIT_MS, async () => {});
}

/** Each engine's ID, read once a process (a failed read is tried again at the next section). */
const engineIds = new Map<string, Promise<string>>();

/**
 * One lock per engine: sections on different engines never meet. A local engine is named by its
 * socket's inode, not by how the path to it is spelled: `/var/run/docker.sock` and
 * `/run/docker.sock` (one a symlink of the other) took two locks for one engine, and sections
 * overlapped (found by an attack: 8 of 30 runs leaked). The engine's own ID is in the name too:
 * the lock is a socket name any local user may bind, and from the socket's inode alone (which
 * anyone may stat) a user the engine refuses could bind it first and hold every section off; the
 * ID only a client the engine answers can read. Throws {@link SandboxUnavailableError} (nothing
 * was run) when the ID cannot be read.
 */
export async function lockName(engine: EngineApi): Promise<string> {
  let where = engine.cli.engine;
  if (engine.socket !== undefined) {
    try {
      const st = statSync(engine.socket);
      where = `socket ${st.dev}:${st.ino}`;
    } catch {
      where = engine.socket; // no socket there: no engine answers either, and the run is refused
    }
  }
  let id = engineIds.get(where);
  if (id === undefined) {
    id = engine.engineId();
    engineIds.set(where, id);
    id.catch(() => engineIds.delete(where));
  }
  try {
    return `aalis-docker-hold-${createHash('sha256').update(`${where}\0${await id}`).digest('hex').slice(0, 16)}`;
  } catch (error) {
    const message = (error as Error).message;
    const unusable = engineUnusable(message, engine.cli.engine);
    if (unusable) throw new SandboxUnavailableError('docker', `${unusable.message}; nothing was run`, unusable.fix);
    throw new SandboxUnavailableError('docker', `cannot read the engine's ID, which names the lock its sections are taken under (${message}); nothing was run`, 'start the engine, or check DOCKER_HOST');
  }
}
