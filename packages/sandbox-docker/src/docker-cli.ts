import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { PREPARE_SCRIPT_HINT } from './prepare-script.js';

/** The variables the docker client reads to find and reach its engine (DOCKER_HOST and the rest). */
export const DOCKER_CLIENT_ENV = ['DOCKER_HOST', 'DOCKER_CONTEXT', 'DOCKER_CONFIG', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY', 'DOCKER_TLS', 'DOCKER_API_VERSION'] as const;

/** What one docker client call printed and how it ended. */
export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How to reach the engine: the client binary and the environment it runs with. */
export interface DockerClientOptions {
  /** The docker client; `docker` on PATH when not given. */
  readonly binary?: string;
  /** Where DOCKER_HOST and the other client settings are read from; the daemon's environment by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The docker client, found the usual way: the engine is whatever `DOCKER_HOST` (or the current
 * context) names, so a remote engine works the same as the local socket. Only the client's own
 * settings are passed to it, never the rest of the daemon's environment.
 */
export class DockerCli {
  readonly binary: string;
  readonly clientEnv: Readonly<Record<string, string>>;

  constructor(options: DockerClientOptions = {}) {
    const source = options.env ?? process.env;
    // An absolute path: the client's PATH slot carries the container's PATH (see spawn).
    this.binary = resolveBinary(options.binary ?? 'docker', source.PATH ?? '/usr/local/bin:/usr/bin:/bin');
    const env: Record<string, string> = {};
    for (const name of DOCKER_CLIENT_ENV) {
      const value = source[name];
      if (value !== undefined && value !== '') env[name] = value;
    }
    // Pinned so that a HOME passed into a container never points the client at another config.
    env.DOCKER_CONFIG ??= join(source.HOME ?? homedir(), '.docker');
    this.clientEnv = env;
  }

  /** Where the engine is, for messages. */
  get engine(): string {
    return this.clientEnv.DOCKER_HOST ?? (this.clientEnv.DOCKER_CONTEXT ? `context ${this.clientEnv.DOCKER_CONTEXT}` : 'the default engine socket');
  }

  /** Runs one client command to its end and collects its output (small outputs only). */
  async call(args: readonly string[], timeoutMs = 30_000, extraEnv: Readonly<Record<string, string>> = {}): Promise<CliResult> {
    const child = this.spawn(args, extraEnv);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    return new Promise((resolve) => {
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ code: 127, signal: null, stdout: '', stderr: `cannot start the docker client ${this.binary}: ${error.message}` });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
      });
    });
  }

  /** Starts a client command with extra variables in its environment (the container's env values). */
  spawn(args: readonly string[], extraEnv: Readonly<Record<string, string>>) {
    return spawn(this.binary, args, { env: { ...extraEnv, ...this.clientEnv }, stdio: ['pipe', 'pipe', 'pipe'] });
  }
}

function resolveBinary(name: string, path: string): string {
  if (name.includes('/')) return name;
  for (const dir of path.split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return name; // spawn reports it missing, and the probe says how to install it
}

/** Whether a client's error output says it could not reach the engine at all. */
export function engineUnreachable(stderr: string): boolean {
  return /Cannot connect to the Docker daemon|error during connect|dial unix|connection refused|no such host|cannot start the docker client/i.test(stderr);
}

/**
 * Why no engine can be used, as a sentence and a fix, when the client's `stderr` says so; undefined
 * for any other failure. A socket that refuses this user (`denied`) is said as such: "no engine
 * answers" sent a user without access to start an engine that ran.
 */
export function engineUnusable(stderr: string, engine: string): { readonly kind: 'denied' | 'unreachable'; readonly message: string; readonly fix: string } | undefined {
  if (/permission denied while trying to connect to the Docker daemon|connect: permission denied/i.test(stderr)) {
    return { kind: 'denied', message: `the Docker Engine at ${engine} refuses this user (permission denied on its socket)`, fix: 'add the user to the docker group (then log in again), run the daemon as root, or point DOCKER_HOST at an engine this user may use' };
  }
  if (engineUnreachable(stderr)) return { kind: 'unreachable', message: `no Docker Engine answers at ${engine}`, fix: `start the engine (dockerd, or ${PREPARE_SCRIPT_HINT}) or point DOCKER_HOST at one that runs` };
  return undefined;
}
