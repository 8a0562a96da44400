import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV_FILES, GIT_LANDINGS, PROJECT_LANDINGS, type SandboxPolicy, type SandboxRunRequest } from '@aalis/api-reach';

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
export const SCENE_PARENT = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();

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
