import { chmod, chown, mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { type SandboxPolicy, SandboxUnavailableError, userCacheDirs } from '@aalis/api-reach';
import { DeploymentSandbox } from './deployment-sandbox.js';
import { DockerSandbox, type DockerSandboxOptions } from './docker-sandbox.js';
import { LABELS } from './labels.js';
import { RESTRICTED_UID } from './profile.js';
import type { UserSpace } from './user-space.js';
import { REMOVE_CONTAINER } from './container-removal.js';

/** How the docker deployment is set up at daemon start; it does not change while running. */
export interface DockerDeploymentOptions extends Omit<DockerSandboxOptions, 'labels' | 'confineTo' | 'local'> {
  /** The host directory holding every user's own data directory (`users/<id>/`). */
  readonly dataRoot: string;
}

const USER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * The docker deployment (000, docker/web mode): every user's commands run in that user's own
 * containers, with only that user's data directory mounted, so users see neither each other's
 * files nor processes. Chosen once at start ({@link DockerDeployment.start}); fixed while running.
 */
export class DockerDeployment {
  readonly mode = 'docker' as const;
  private readonly users = new Map<string, Promise<UserSpace>>();
  /**
   * The deployment's one sandbox service, for the daemon's tools: each command runs as the user
   * whose space holds its working directory (see {@link DeploymentSandbox}).
   */
  readonly sandbox: DeploymentSandbox;

  private constructor(
    readonly options: DockerDeploymentOptions,
    readonly dataRoot: string,
    /** The engine as this deployment reaches it, for listing and removing its containers. */
    private readonly engine: DockerSandbox,
  ) {
    Object.freeze(this.options);
    const usersDir = join(dataRoot, 'users');
    this.sandbox = new DeploymentSandbox({ usersDir, spaceOf: (id) => this.users.get(id), probe: () => engine.probe() });
  }

  /**
   * Starts the deployment: checks the engine and images (fails closed with
   * {@link SandboxUnavailableError} when either is missing), creates the data root and removes
   * containers a previous run of this instance left behind.
   */
  static async start(options: DockerDeploymentOptions): Promise<DockerDeployment> {
    const engine = new DockerSandbox({ ...options });
    const probe = await engine.probe();
    if (!probe.available) {
      const failed = probe.checks.find((c) => !c.ok);
      throw new SandboxUnavailableError('docker', `the docker deployment cannot start: ${failed?.name}: ${failed?.detail}`, failed?.fix ?? 'see aalis doctor');
    }
    await mkdir(join(options.dataRoot, 'users'), { recursive: true, mode: 0o711 });
    const deployment = new DockerDeployment(options, await realpath(options.dataRoot), engine);
    await engine.reapOrphans();
    return deployment;
  }

  /** The space of one user, created on first use. Throws on an id that is not a safe name. */
  user(userId: string): Promise<UserSpace> {
    if (!USER_ID.test(userId)) {
      return Promise.reject(new Error(`user id ${JSON.stringify(userId)} is not usable in the docker deployment: use 1-64 letters, digits, '_', '.', '-'`));
    }
    let space = this.users.get(userId);
    if (space === undefined) {
      space = this.createUser(userId);
      this.users.set(userId, space);
      space.catch(() => this.users.delete(userId));
    }
    return space;
  }

  private async createUser(userId: string): Promise<UserSpace> {
    const dataDir = join(this.dataRoot, 'users', userId);
    const workspace = join(dataDir, 'workspace');
    const tmp = join(dataDir, 'tmp');
    const home = join(dataDir, 'home');
    const caches = userCacheDirs(home, 'linux'); // a home of the person's own, which the host never runs from
    // The data directory keeps other host users out; inside a container only the workspace and
    // the temp are mounted, and the restricted uid must be able to read the workspace.
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await mkdir(workspace, { recursive: true, mode: 0o755 });
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    // The user's own caches: only what exists can be mounted, and no user ever gets the daemon's.
    await mkdir(home, { recursive: true, mode: 0o755 });
    for (const cache of caches) await mkdir(cache, { recursive: true, mode: 0o700 });
    try {
      // Restricted runs are uid 10001; the user's temp is the one host place they may write.
      await chown(tmp, RESTRICTED_UID, RESTRICTED_UID);
    } catch {
      await chmod(tmp, 0o1777); // not root: the only way uid 10001 can write it
    }
    const sandbox = new DockerSandbox({ ...this.options, labels: { [LABELS.user]: userId }, confineTo: [dataDir] });
    const base = { readDeny: [], writeDeny: [], writeExceptions: [], controlDeny: [], localPorts: [], unixSockets: [] };
    return Object.freeze({
      userId,
      dataDir,
      workspace,
      tmp,
      home,
      caches: Object.freeze([...caches]),
      sandbox,
      policy: (access: 'readonly' | 'workspace'): SandboxPolicy =>
        access === 'readonly'
          ? { ...base, write: [tmp], readAllowWithin: [tmp], network: 'off' }
          : { ...base, write: [workspace, ...caches, tmp], readAllowWithin: [tmp], network: 'on' },
    });
  }

  /** Ids of every container of this deployment, all users. */
  containers(): Promise<string[]> {
    return this.engine.containers();
  }

  /**
   * Removes every container this process started for the deployment (daemon shutdown); returns
   * how many. Another daemon's containers, even of the same instance name, are never touched.
   */
  async stop(): Promise<number> {
    const ids = await this.engine.ownContainers();
    if (ids.length > 0) await this.engine.cli.call([...REMOVE_CONTAINER, ...ids]);
    return ids.length;
  }
}
