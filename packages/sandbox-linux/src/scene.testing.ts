import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { ENV_FILES, GIT_LANDINGS, PROJECT_LANDINGS, type SandboxPolicy, type SandboxRunRequest } from '@aalis/api-reach';
import { probeOverlay } from './overlay-mount.js';
import { createLinuxSandbox, type LinuxSandboxOptions } from './service.js';

/** A throw-away host layout: a fake HOME, a workspace (a `git init` repo with a .env), a data dir with a control plane, a session temp. */
export interface Scene {
  readonly root: string;
  readonly home: string;
  readonly ws: string;
  readonly data: string;
  readonly control: string;
  readonly sessionTmp: string;
  cleanup(): void;
}

/**
 * Where scenes live: outside /tmp, which is private in the sandbox, so the fake HOME and the
 * control plane are visible read-only there as a real HOME would be.
 */
export const SCENE_PARENT = TEST_SCRATCH;

/** Creates a {@link Scene} (real paths throughout). */
export function makeScene(): Scene {
  const root = realpathSync(mkdtempSync(join(SCENE_PARENT, 'aalis-scene-')));
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  const data = join(root, 'data');
  const control = join(data, 'run');
  const sessionTmp = join(data, 'tmp', 'session-1');
  for (const d of [home, join(home, '.ssh'), ws, join(ws, 'src'), control, sessionTmp]) mkdirSync(d, { recursive: true });
  execFileSync('git', ['init', '-q', ws], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' } });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  writeFileSync(join(home, '.bashrc'), '# rc\n');
  writeFileSync(join(ws, '.env'), 'SECRET=1\n');
  writeFileSync(join(ws, '.env.example'), 'SECRET=\n');
  writeFileSync(join(ws, 'src', 'a.txt'), 'a\n');
  writeFileSync(join(control, 'state.json'), '{}\n');
  return { root, home, ws, data, control, sessionTmp, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** The workspace-tier policy for a scene, written by hand in the contract's layer shape. */
export function workspacePolicy(s: Scene, extra: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    readDeny: [ENV_FILES, { path: join(s.home, '.ssh') }, { path: join(s.data, 'tmp') }],
    readAllowWithin: [s.sessionTmp],
    write: [s.ws, s.sessionTmp],
    writeDeny: [...GIT_LANDINGS, ...PROJECT_LANDINGS, ENV_FILES, { path: join(s.home, '.bashrc') }],
    writeExceptions: [{ path: join(s.ws, 'node_modules') }],
    controlDeny: [{ path: s.control }],
    network: 'off',
    localPorts: [],
    unixSockets: [s.ws, s.sessionTmp],
    tmp: s.sessionTmp,
    ...extra,
  };
}

/** A request running `argv` in the workspace with a minimal environment. */
export function req(s: Scene, argv: [string, ...string[]], extra: Partial<SandboxRunRequest> = {}): SandboxRunRequest {
  return {
    argv,
    cwd: s.ws,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, LANG: 'C' },
    timeoutMs: 20_000,
    policy: workspacePolicy(s),
    ...extra,
  };
}

/** Every path under `dir`, sorted (for before/after comparisons). */
export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      out.push(p);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Path → content (or `<dir>`, `-> target`) of everything under `dir`: what "nothing written" is checked against. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of listTree(dir)) {
    const st = lstatSync(p);
    out.set(p, st.isDirectory() ? `<dir ${st.mode.toString(8)}>` : st.isSymbolicLink() ? `-> ${readlinkSync(p)}` : `${st.mode.toString(8)} ${readFileSync(p, 'utf8')}`);
  }
  return out;
}

/**
 * Resolves once a process whose argv contains `token` runs on this machine (the sandbox's pid
 * namespace is a child of ours, so its processes are in our /proc). Tests use it to act at a known
 * point of a sandboxed command instead of after a guessed delay, which a loaded machine outlasts.
 * Put the token inside the command's script (`sh -c 'exec sleep <token>'`), never as an argv
 * element of its own: bwrap's argv holds the command's, so it would be found before the command runs.
 */
export async function untilProcess(token: string, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(token)) return Number(entry);
      } catch {
        // the process ended between the listing and the read
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no process with ${token} in its argv within ${timeoutMs} ms`);
}

let gates = 0;

/** A point a sandboxed command waits at until the test opens it (see {@link gate}). */
export interface Gate {
  /** A shell snippet that returns once the gate is open. */
  readonly wait: string;
  /** Opens the gate: every `wait` on it returns. */
  open(): void;
}

/**
 * A gate for a sandboxed command: a file in the scene's HOME, which the sandbox sees read-only and
 * live (never in an overlay). A command that must not go on before the test has done something
 * waits on it instead of sleeping a guessed time, which a loaded machine outlasts.
 */
export function gate(s: Scene): Gate {
  gates += 1;
  const path = join(s.home, `gate-${process.pid}-${gates}`);
  return { wait: `until [ -e '${path}' ]; do sleep 0.02; done`, open: () => writeFileSync(path, '') };
}

/** A {@link Scene} whose runs use the overlay, with the daemon's temp directory in the scene. */
export interface OverlayScene extends Scene {
  /** The daemon's temp directory: where run folders and their layers go. */
  readonly tmpDir: string;
  /** Where conflicting versions and taken-away landings are kept. */
  readonly undoneDir: string;
  /** A sandbox that requires the overlay, with no looks while a command runs. */
  sandbox(extra?: LinuxSandboxOptions): ReturnType<typeof createLinuxSandbox>;
  /** Whether `name` is in the upper layer of some live run: that run's command has written it. */
  inUpper(name: string): boolean;
  /** Names of the run folders in {@link tmpDir}. */
  runFolders(): string[];
}

/** Makes an {@link OverlayScene}; throws (with the probe's reason) where this kernel mounts no overlay. */
export async function overlayScene(): Promise<OverlayScene> {
  const s = makeScene();
  const tmpDir = join(s.root, 'daemon-tmp');
  const undoneDir = join(s.root, 'undone');
  mkdirSync(tmpDir);
  const probe = await probeOverlay(tmpDir);
  if (!probe.ok) throw new Error(`no overlay here: ${JSON.stringify(probe)}`);
  const runFolders = () => readdirSync(tmpDir).filter((n) => n.startsWith('aalis-sbx-'));
  const layersOf = (run: string) => join(tmpDir, run, 'overlay');
  return {
    ...s,
    tmpDir,
    undoneDir,
    // rm walks deeper than PATH_MAX (deep-commit.test.ts)
    cleanup: () => execFileSync('rm', ['-rf', s.root]),
    sandbox: (extra = {}) => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, tmpDir, undoneDir, ...extra }),
    // A run folder of an earlier run may be removed while this looks (its cleanup ends after its
    // result): a folder gone between the listing and the look is not a live run.
    inUpper: (name) => runFolders().some((run) => listedOrNone(layersOf(run)).some((i) => existsSync(join(layersOf(run), i, 'upper', name)))),
    runFolders,
  };
}

/** The names in `dir`, or none where it is gone (removed by a run's cleanup meanwhile). */
function listedOrNone(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw e;
  }
}

/**
 * Resolves once `cond` holds, looking every 20 ms; throws naming `what` after `timeoutMs`. The
 * limit is generous on purpose: it only decides how long a failing test takes to say so.
 */
export async function until(cond: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
