import { constants } from 'node:fs';
import { type FileHandle, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { type SandboxPlan, type SandboxProbe, type SandboxService, SandboxUnavailableError } from '@aalis/api-reach';
import type { DockerRunRequest, DockerRunResult } from './docker-sandbox.js';
import type { UserSpace } from './user-space.js';

/** What the deployment's sandbox needs of the deployment. */
export interface DeploymentSpaces {
  /** `<dataRoot>/users`, a real path. */
  readonly usersDir: string;
  /** The space of a user already created, or undefined. */
  spaceOf(userId: string): Promise<UserSpace> | undefined;
  probe(): Promise<SandboxProbe>;
}

function refuse(reason: string, fix: string): SandboxUnavailableError {
  return new SandboxUnavailableError('docker', reason, fix);
}

/**
 * The docker deployment's one sandbox service (what the daemon's tools get): a command runs as
 * the user whose space holds its working directory, in that user's own containers, with `HOME`
 * set to the user's home (their own toolchain caches) and nothing outside their data directory
 * mounted. A directory in nobody's space, or in a space not opened, is refused: nothing runs.
 */
export class DeploymentSandbox implements SandboxService {
  readonly backend = 'docker' as const;

  constructor(private readonly spaces: DeploymentSpaces) {}

  probe(): Promise<SandboxProbe> {
    return this.spaces.probe();
  }

  /** The space a working directory lies in; throws {@link SandboxUnavailableError} for any other. */
  async spaceFor(cwd: string): Promise<UserSpace> {
    let real: string;
    try {
      real = await realpath(cwd);
    } catch {
      throw refuse(`the working directory ${cwd} does not exist`, "run the command in the person's own workspace");
    }
    const rel = relative(this.spaces.usersDir, real);
    const userId = rel.split(sep)[0] ?? '';
    const space = rel === '' || rel.startsWith('..') || userId === '' ? undefined : this.spaces.spaceOf(userId);
    if (space === undefined) {
      throw refuse(`the working directory ${real} is in no user's space of the docker deployment`, "run the command in the person's own workspace (the daemon binds each person to theirs)");
    }
    return space;
  }

  /** The plan of the user's own sandbox for `request`, with the user's home (the session temp is opened to both identities only by a run). */
  async plan(request: DockerRunRequest): Promise<SandboxPlan> {
    const space = await this.spaceFor(request.cwd);
    return space.sandbox.plan({ ...request, env: { ...request.env, HOME: space.home } });
  }

  async run(request: DockerRunRequest): Promise<DockerRunResult> {
    const space = await this.spaceFor(request.cwd);
    for (const root of request.policy.write) {
      if (isStrictlyWithin(root, space.tmp)) await openToBoth(root);
    }
    return space.sandbox.run({ ...request, env: { ...request.env, HOME: space.home } });
  }
}

function isStrictlyWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * Makes a session temp in the user's temp writable by both identities a user's commands run as
 * (the owner, and uid 10001 in the read-only tier, which could not write the daemon-made `0700`
 * directory). Opened without following a final symlink and checked to be the directory named:
 * the user's temp is writable from their containers, so the name may have been swapped.
 */
async function openToBoth(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // nothing to mount, nothing to open
    throw refuse(`the session temp ${dir} is not a plain directory (${(error as Error).message})`, 'remove it; the daemon makes it again');
  }
  try {
    const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    if (real !== dir) throw refuse(`the session temp ${dir} is not where it was named (it is ${real ?? 'unknown'})`, 'remove it; the daemon makes it again');
    // Sticky: each identity keeps its own files.
    await handle.chmod(0o1777);
  } finally {
    await handle.close();
  }
}
