import type { PageCodeKind } from '@aalis/core';
import { openSealedToken, type SealedToken } from './console-codes.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TEST_SCRATCH } from '../../../../test/scratch.js';
import { fileURLToPath } from 'node:url';
import { makeProcessDir } from '@aalis/core';

/** The `aalis` command of this checkout, from source (the tests run without a build; `bin/aalis.cjs` runs dist/). */
export const BIN = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'scripts', 'source.mjs');

/*
 * What the tests and benchmarks leave: every daemon notes its data directory in the user's registry
 * (daemon-registry.ts), and every data directory the registry knows of is hidden in every
 * sandboxed command, one mount each. A test process that left its deployments and their notes in
 * the user's own registry made every later daemon's runs slower (about 90 left on one machine cost
 * each `run_command` 8 ms of CPU, and the benchmark measured that), and filled the developer's own
 * state. So the daemons started here note themselves in a registry of this process's
 * (XDG_STATE_HOME, unless the caller's env names one), and that and the deployment directories go
 * when the process exits; those of a process that was killed go at the next process's first one.
 */
/** A folder of this process's in the tests' scratch folder (/var/tmp outside a test run), removed when it exits; a killed one's go at the next one's start (core's process folders). */
const scratchDir = (prefix: 'aalis-serve-test-' | 'aalis-serve-state-'): string => makeProcessDir(TEST_SCRATCH, prefix);
let stateHome: string | undefined;

/** This process's daemon registry (XDG_STATE_HOME) for the daemons started here; see above. */
export function testStateHome(): string {
  stateHome ??= scratchDir('aalis-serve-state-');
  return stateHome;
}

/** The environment a daemon or command started by a test gets: `env` over the process's, with this process's registry unless `env` names one. */
export function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, XDG_STATE_HOME: testStateHome(), ...env };
}

/** A fresh deployment directory under /var/tmp (the sandbox has a private /tmp), with a config if given; removed when this process exits. */
export function deploymentDir(config?: unknown): string {
  const dir = scratchDir('aalis-serve-test-');
  if (config !== undefined) writeFileSync(join(dir, 'aalis.config.json'), typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return dir;
}

/** A JSON answer as tests read it, field by field. */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers field by field and assert on them
export type Json = any;

/** A daemon started as the real binary. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** The daemon's token, read from its data directory (the printed address holds no code when stdout is not a terminal). */
  readonly token: string;
  /** A new one-time console address (`POST /api/console/address`, as `aalis console` asks). */
  consoleAddress(): Promise<string>;
  /** What it printed on stdout so far, and on stderr. */
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit status. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
  /** A JSON API call with the token (or `token: null` for none). */
  api(method: string, path: string, body?: unknown, token?: string | null): Promise<{ status: number; body: Json }>;
}

/** Runs `aalis serve` to its end (for start-up failures): exit status and output. */
export function serveOnce(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Starts `aalis serve --dir DIR --port 0` and waits for the console line on stdout; `bin` is the script run (default {@link BIN}, from source). */
export async function startServe(dir: string, extra: readonly string[] = [], env: NodeJS.ProcessEnv = {}, bin: string = BIN): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', '--dir', dir, '--port', '0', ...extra], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code, signal) => {
      // a signal's end has no status: say which, for the assertion's message (stderr())
      if (signal !== null) stderr += `\n[the test saw aalis serve (pid ${child.pid}) end on ${signal}]\n`;
      r(code);
    }),
  );
  const line = await new Promise<string>((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`aalis serve did not print its console line in 45 s; stderr:\n${stderr}`)), 45_000);
    child.stdout?.on('data', (d) => {
      stdout += d;
      const match = /^console: (\S+)$/m.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveLine(match[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`aalis serve exited (${code}) before it was ready; stderr:\n${stderr}`));
    });
  });
  const url = line.slice(0, line.indexOf('/console'));
  // stdout is a pipe here, so the address holds no code (serve.ts): the token is read where local
  // clients read it, in the data directory the daemon named on stderr before that line
  const dataDir = /^aalis serve: deployment .* data in (.+)$/m.exec(stderr)?.[1];
  if (dataDir === undefined) throw new Error(`aalis serve named no data directory before its console line; stderr:\n${stderr}`);
  const token = readFileSync(join(dataDir, 'daemon', 'token'), 'utf8').trim();
  return {
    child,
    url,
    token,
    async consoleAddress() {
      const res = await fetch(`${url}/api/console/address`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { address?: string };
      if (res.status !== 200 || typeof body.address !== 'string') throw new Error(`no console address: ${res.status} ${JSON.stringify(body)}`);
      return body.address;
    },
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    async api(method, path, body, useToken = token) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { ...(useToken !== null ? { authorization: `Bearer ${useToken}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed };
    },
  };
}

/** A Server-Sent-Events subscription: the events seen so far, and a wait for the next matching one. */
export interface EventStream {
  readonly events: { name: string; data: Json }[];
  next(name: string, where?: (data: Json) => boolean, timeoutMs?: number): Promise<Json>;
  close(): void;
}

/** Subscribes to `/api/events` and resolves once the stream's `ready` event arrived. */
export async function subscribe(url: string, token: string, query = ''): Promise<EventStream> {
  const controller = new AbortController();
  const res = await fetch(`${url}/api/events${query}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (!res.ok || !res.body) throw new Error(`/api/events answered ${res.status}`);
  const events: { name: string; data: Json }[] = [];
  const waiters: { name: string; where: (d: Json) => boolean; resolve: (d: Json) => void; from: number }[] = [];
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const check = () => {
    for (const w of [...waiters]) {
      const hit = events.slice(w.from).find((e) => e.name === w.name && w.where(e.data));
      if (hit) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hit.data);
      }
    }
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const name = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!name) continue;
          if (name === 'ready') ready();
          events.push({ name, data: data ? JSON.parse(data) : undefined });
          check();
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  await isReady;
  return {
    events,
    next(name, where = () => true, timeoutMs = 30_000) {
      return new Promise((resolveEvent, reject) => {
        const timer = setTimeout(() => reject(new Error(`no '${name}' event within ${timeoutMs} ms; saw: ${events.map((e) => e.name).join(', ')}`)), timeoutMs);
        waiters.push({ name, where, from: 0, resolve: (d) => {
          clearTimeout(timer);
          resolveEvent(d);
        },
        });
        check();
      });
    },
    close: () => controller.abort(),
  };
}

/** An owner's turn on the `chat` platform in conversation `session`. */
export function ownerTurn(session: string, userId = 'alice', inbound = `m-${Date.now()}`) {
  const who = { platform: 'chat', userId };
  return { session: { id: session }, platform: 'chat', speaker: who, authorised: who, inbound: { id: inbound }, category: 'own' as const };
}

/** Claims a code of the page `kind` at the daemon at `url` as that page does, and opens the sealed secret with the code's key. */
export async function claimConsoleCode(url: string, code: string, kind: PageCodeKind = 'console'): Promise<string> {
  const res = await fetch(`${url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: code.split('.')[0], for: kind }) });
  const body = (await res.json()) as SealedToken;
  if (res.status !== 200) throw new Error(`the daemon did not take the console code: ${res.status} ${JSON.stringify(body)}`);
  return openSealedToken(code, body, kind);
}
