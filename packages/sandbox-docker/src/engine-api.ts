import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { CgroupFreezer } from './cgroup-freezer.js';
import type { DockerCli } from './docker-cli.js';
import { LABELS } from './labels.js';

/** One sandbox container as the engine lists it. */
export interface EngineContainer {
  readonly id: string;
  /** Its name, without the engine's leading slash. */
  readonly name: string;
  /** The engine's state: `created`, `running`, `paused`, `restarting`, `removing`, `exited`, `dead`. */
  readonly state: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** How a container was held still: its freezer written here, or the engine's pause (cgroup-freezer.ts). */
export type HeldBy = 'freezer' | 'engine';

/** How long one engine call may take before it counts as failed. */
const CALL_TIMEOUT_MS = 30_000;

/**
 * The few engine calls holding containers still needs (list, pause, unpause, state), made on
 * every run: straight to the engine's unix socket when the client would use a local one (about a
 * millisecond a call here, where a `docker ps` client costs about fifty), through the docker
 * client otherwise (a remote engine, a context), and through it too whenever the socket call fails.
 */
export class EngineApi {
  /** The local socket the client would use, or undefined when the client goes elsewhere. */
  readonly socket: string | undefined;

  /** `freezer`: where a local engine's containers are frozen directly (tests give another). */
  constructor(
    readonly cli: DockerCli,
    readonly freezer = new CgroupFreezer(),
  ) {
    this.socket = localSocketOf(cli.clientEnv);
  }

  /**
   * Holds a container still: its freezer written here when the engine is local and this process
   * may (cgroup-freezer.ts), the engine's pause otherwise; false with why when neither held it.
   */
  async hold(id: string): Promise<{ ok: true; by: HeldBy } | { ok: false; why: string }> {
    if (this.socket !== undefined && (await this.freezer.freeze(id)) === 'frozen') return { ok: true, by: 'freezer' };
    const paused = await this.pause(id);
    return paused.ok ? { ok: true, by: 'engine' } : paused;
  }

  /** Lets a container {@link hold} held run again, the way it was held. */
  async release(id: string, by: HeldBy): Promise<void> {
    if (by === 'engine') await this.unpause(id);
    else this.thawFrozen(id);
  }

  /** Whether the kernel holds a running container frozen that the engine does not know paused (a freeze by a holder that died). */
  frozenUnknown(container: EngineContainer): boolean {
    return this.socket !== undefined && container.state === 'running' && this.freezer.frozen(container.id);
  }

  /**
   * Thaws a container frozen directly. Only a process that may write its freezer can: the
   * engine's unpause refuses one it did not pause, and its pause one runc finds frozen. A freeze
   * left by a root daemon that died is thawed by the next root daemon's section; until then the
   * container stays still (its commands are refused as paused) and can be removed.
   */
  thawFrozen(id: string): void {
    this.freezer.thaw(id);
  }

  /** Every sandbox container on the engine (this package's label), in any state, of any instance. */
  async sandboxContainers(): Promise<EngineContainer[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: [`${LABELS.sandbox}=1`] }));
    const viaSocket = await this.#http('GET', `/containers/json?all=1&filters=${filters}`);
    if (viaSocket?.status === 200) {
      const list = JSON.parse(viaSocket.body) as { Id: string; Names?: string[]; State: string; Labels?: Record<string, string> }[];
      return list.map((c) => ({ id: c.Id, name: (c.Names?.[0] ?? '').replace(/^\//, ''), state: c.State, labels: c.Labels ?? {} }));
    }
    const ids = await this.cli.call(['ps', '--all', '--quiet', '--no-trunc', '--filter', `label=${LABELS.sandbox}=1`]);
    if (ids.code !== 0) throw new Error(`cannot list the sandbox containers at ${this.cli.engine}: ${ids.stderr.trim()}`);
    const wanted = ids.stdout.split('\n').filter((line) => line.trim() !== '');
    if (wanted.length === 0) return [];
    // labels as JSON (a `ps` listing joins them with commas, which a label's value may hold)
    const inspect = await this.cli.call(['inspect', '--format', '{{json .}}', ...wanted]);
    const out: EngineContainer[] = [];
    for (const line of inspect.stdout.split('\n')) {
      if (line.trim() === '') continue;
      const c = JSON.parse(line) as { Id: string; Name: string; State: { Status: string }; Config: { Labels?: Record<string, string> } };
      out.push({ id: c.Id, name: c.Name.replace(/^\//, ''), state: c.State.Status, labels: c.Config.Labels ?? {} });
    }
    // one removed between the listing and the inspect is simply not there
    return out;
  }

  /**
   * The engine's own ID (`GET /info`, `docker info`): only a client the engine answers can read it,
   * so the hold lock named by it (hold-still.ts) is a name a local user without access to the
   * engine cannot compute, and so cannot take ahead of the sections. Throws when it cannot be read.
   */
  async engineId(): Promise<string> {
    const viaSocket = await this.#http('GET', '/info');
    if (viaSocket?.status === 200) {
      const id = (JSON.parse(viaSocket.body) as { ID?: unknown }).ID;
      if (typeof id === 'string' && id !== '') return id;
    }
    const result = await this.cli.call(['info', '--format', '{{.ID}}']);
    const id = result.stdout.trim();
    if (result.code === 0 && id !== '' && id !== '<no value>') return id;
    throw new Error(`cannot read the engine's ID at ${this.cli.engine}: ${result.stderr.trim() || 'its answer has none'}`);
  }

  /** Pauses (freezes) a container; false with why when the engine refused. */
  pause(id: string): Promise<{ ok: true } | { ok: false; why: string }> {
    return this.#post(id, 'pause');
  }

  /** Lets a paused container run again. */
  unpause(id: string): Promise<{ ok: true } | { ok: false; why: string }> {
    return this.#post(id, 'unpause');
  }

  /** A container's state, or `gone` when the engine has none by that name or id. */
  async stateOf(name: string): Promise<string> {
    const viaSocket = await this.#http('GET', `/containers/${encodeURIComponent(name)}/json`);
    if (viaSocket?.status === 200) return (JSON.parse(viaSocket.body) as { State: { Status: string } }).State.Status;
    if (viaSocket?.status === 404) return 'gone';
    const result = await this.cli.call(['inspect', '--format', '{{.State.Status}}', name]);
    if (result.code === 0) return result.stdout.trim();
    if (/No such (container|object)/i.test(result.stderr)) return 'gone';
    throw new Error(`cannot read the state of ${name} at ${this.cli.engine}: ${result.stderr.trim()}`);
  }

  async #post(id: string, what: 'pause' | 'unpause'): Promise<{ ok: true } | { ok: false; why: string }> {
    const viaSocket = await this.#http('POST', `/containers/${encodeURIComponent(id)}/${what}`);
    if (viaSocket?.status === 204) return { ok: true };
    if (viaSocket !== undefined) return { ok: false, why: messageOf(viaSocket.body) };
    const result = await this.cli.call([what, id]);
    return result.code === 0 ? { ok: true } : { ok: false, why: result.stderr.trim() };
  }

  /** One call on the local socket; undefined when there is none or it could not be reached. */
  #http(method: 'GET' | 'POST', path: string): Promise<{ status: number; body: string } | undefined> {
    const socketPath = this.socket;
    if (socketPath === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const req = request({ socketPath, path, method, timeout: CALL_TIMEOUT_MS, headers: { host: 'docker' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => resolve(undefined));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', () => resolve(undefined));
      req.end();
    });
  }
}

function messageOf(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body.trim();
  } catch {
    return body.trim();
  }
}

/**
 * The unix socket the docker client would reach: `DOCKER_HOST=unix://…`, or the default socket
 * when neither `DOCKER_HOST` nor a context (the variable, or the client config's `currentContext`)
 * names another engine. Undefined otherwise: the client is asked instead.
 */
export function localSocketOf(env: Readonly<Record<string, string>>): string | undefined {
  const host = env.DOCKER_HOST;
  if (host !== undefined) return host.startsWith('unix://') ? host.slice('unix://'.length) : undefined;
  if (env.DOCKER_CONTEXT !== undefined && env.DOCKER_CONTEXT !== 'default') return undefined;
  if (env.DOCKER_CONFIG !== undefined) {
    try {
      const config = JSON.parse(readFileSync(join(env.DOCKER_CONFIG, 'config.json'), 'utf8')) as { currentContext?: unknown };
      if (typeof config.currentContext === 'string' && config.currentContext !== '' && config.currentContext !== 'default') return undefined;
    } catch {
      // no config, or not JSON: the client uses the default engine too
    }
  }
  return '/var/run/docker.sock';
}
