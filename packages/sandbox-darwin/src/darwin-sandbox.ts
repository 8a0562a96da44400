import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseRunRequest,
  refusedWritesIn,
  type SandboxCheck,
  type SandboxPlan,
  type SandboxProbe,
  type SandboxRunRequest,
  type SandboxRunResult,
  type SandboxService,
  SandboxUnavailableError,
} from '@aalis/api-reach';
import { execa } from 'execa';
import { darwinPath } from './darwin-path.js';
import { darwinRefusal } from './refusal-test.js';
import { darwinPlan } from './darwin-plan.js';
import { runSandboxExec, type SandboxExecRun } from './sandbox-exec-process.js';
import { defineArgs, ProfileParams } from './profile-params.js';
import { literalRegex } from './sbpl-regex.js';
import { seatbeltInvocation } from './seatbelt-profile.js';
import { type DarwinUserDirs, findUserDirs } from './user-dirs.js';

/** Where sandbox-exec lives on every macOS. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';
/** Bytes kept of stdout and of stderr when the request does not say. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
// macOS caps argv + environment at 1 MiB; a profile this large would fail to exec, so refuse early.
const MAX_PROFILE_BYTES = 512 * 1024;

/** Options of {@link createDarwinSandbox}. */
export interface DarwinSandboxOptions {
  /** The sandbox-exec binary; {@link SANDBOX_EXEC} unless a test says otherwise. */
  readonly sandboxExec?: string;
  /** The platform to assume; `process.platform` unless a test says otherwise. */
  readonly platform?: NodeJS.Platform;
  /**
   * This user's temp and cache folders; asked of `getconf` once per service unless given (null:
   * none). Granted only where the policy grants the owner's caches; see the README.
   */
  readonly userDirs?: DarwinUserDirs | null;
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// A real refusal, checked once per service, with a profile written the way `run` writes them
// (paths as -D parameters, a subpath and a regex filter): a file the profile denies must stay
// unwritten, and one it allows must be written, so a profile sandbox-exec cannot read does not
// pass for enforcement.
async function enforcementCheck(sandboxExec: string): Promise<SandboxCheck> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-darwin-probe-'));
  try {
    const denied = join(dir, 'denied');
    const target = join(denied, 'x');
    const allowed = join(dir, 'allowed');
    await mkdir(denied);
    const params = new ProfileParams();
    const filters = [...new Set([denied, darwinPath(denied, 'probe')])].map((path) => `(subpath ${params.quote(path, 'probe')})`);
    filters.push(`(regex ${params.quote(`^${literalRegex(darwinPath(denied, 'probe'))}(/|$)`, 'probe')})`);
    const profile = `(version 1)\n(allow default)\n(deny file-write* ${filters.join(' ')})\n`;
    const args = [...defineArgs(params.values()), '-p', profile, '--', '/bin/sh', '-c', `echo x > '${target}'; echo y > '${allowed}'`];
    const result = await execa(sandboxExec, args, { reject: false, timeout: 10_000 });
    const exists = (path: string) =>
      readFile(path, 'utf8').then(
        () => true,
        () => false,
      );
    const [written, control] = [await exists(target), await exists(allowed)];
    const ok = !written && control;
    const detail = ok
      ? 'a write the profile denies was refused, one it allows was made'
      : written
        ? `a denied write was not refused (exit ${String(result.exitCode)}, file written): ${result.stderr.trim()}`
        : `the profile was not applied as written (an allowed write did not happen, exit ${String(result.exitCode)}): ${result.stderr.trim()}`;
    return {
      name: 'sandbox-exec enforces a profile',
      ok,
      detail,
      ...(ok ? {} : { fix: 'run outside another sandbox (sandbox-exec cannot nest) on a macOS that still ships sandbox-exec and reads -D parameters' }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The macOS sandbox service: each command runs under `sandbox-exec -D … -p PROFILE`, the profile
 * and its parameters built from the request's policy by {@link seatbeltInvocation}. Anywhere but
 * macOS, or on a Mac without a working sandbox-exec, {@link SandboxService.probe} says why and
 * `run` throws {@link SandboxUnavailableError} without running anything.
 */
export function createDarwinSandbox(options: DarwinSandboxOptions = {}): SandboxService {
  const sandboxExec = options.sandboxExec ?? SANDBOX_EXEC;
  const platform = options.platform ?? process.platform;
  let verified: SandboxProbe | undefined;
  let userDirs: Promise<DarwinUserDirs | undefined> | undefined;

  async function probe(): Promise<SandboxProbe> {
    if (verified !== undefined) return verified;
    const checks: SandboxCheck[] = [];
    const onMac = platform === 'darwin';
    checks.push({
      name: 'macOS',
      ok: onMac,
      detail: onMac ? 'running on macOS' : `running on ${platform}; Seatbelt exists only on macOS`,
      ...(onMac ? {} : { fix: 'use the linux sandbox (bubblewrap) here, or the docker deployment' }),
    });
    const found = onMac && (await executable(sandboxExec));
    checks.push({
      name: 'sandbox-exec',
      ok: found,
      detail: found ? `${sandboxExec} is executable` : onMac ? `${sandboxExec} is missing or not executable` : 'not looked for: not macOS',
      ...(found ? {} : { fix: onMac ? `restore ${sandboxExec} (it ships with macOS)` : 'run on macOS' }),
    });
    if (found) {
      try {
        checks.push(await enforcementCheck(sandboxExec));
      } catch (error) {
        checks.push({ name: 'sandbox-exec enforces a profile', ok: false, detail: `the check could not run: ${(error as Error).message}` });
      }
    }
    const result: SandboxProbe = { backend: 'darwin', available: checks.every((check) => check.ok), checks };
    if (result.available) verified = result;
    return result;
  }

  async function execRun(request: SandboxRunRequest): Promise<SandboxExecRun> {
    userDirs ??= options.userDirs === undefined ? findUserDirs() : Promise.resolve(options.userDirs ?? undefined);
    return sandboxExecRun(request, sandboxExec, await userDirs);
  }

  /** The profile and sandbox-exec argv `run` would start; built anywhere (no sandbox-exec is run), so `aalis policy` shows it off macOS too. */
  async function plan(request: SandboxRunRequest): Promise<SandboxPlan> {
    return darwinPlan(await execRun(request));
  }

  async function run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    // The contract first, as every backend does, so a bad request reads the same everywhere.
    const checked = parseRunRequest('darwin', request);
    const found = await probe();
    const failed = found.checks.find((check) => !check.ok);
    if (!found.available || failed !== undefined) {
      throw new SandboxUnavailableError('darwin', failed?.detail ?? 'the probe failed', failed?.fix ?? 'run `aalis doctor` to see what is missing');
    }
    // exactly the plan's command line (runSandboxExec starts darwinPlan's argv)
    const outcome = await runSandboxExec(await execRun(checked));
    const denied = refusedWritesIn(outcome.stderr, checked.cwd, darwinRefusal(checked.policy));
    return { ...outcome, writeDenied: denied.denied, deniedWrites: denied.paths };
  }

  return { backend: 'darwin', probe, plan, run };
}

/**
 * What a run of `request` starts, for plan and run alike: the profile and parameters built from
 * its policy (with this user's temp and cache folders), the command, its env and limits.
 */
export function sandboxExecRun(request: SandboxRunRequest, sandboxExec: string, dirs: DarwinUserDirs | undefined): SandboxExecRun {
  const checked = parseRunRequest('darwin', request);
  const { profile, params } = seatbeltInvocation(checked.policy, dirs === undefined ? {} : { userDirs: dirs });
  const bytes = Buffer.byteLength(profile) + Object.entries(params).reduce((sum, [key, value]) => sum + Buffer.byteLength(value) + key.length + 4, 0);
  if (bytes > MAX_PROFILE_BYTES) {
    throw new SandboxUnavailableError('darwin', `the profile and its parameters are ${bytes} bytes, over the ${MAX_PROFILE_BYTES} a command line can carry`, 'shorten the policy: fewer writable roots or protected paths');
  }
  return {
    sandboxExec,
    profile,
    params,
    argv: checked.argv,
    cwd: checked.cwd,
    env: checked.env,
    ...(checked.stdin === undefined ? {} : { stdin: checked.stdin }),
    timeoutMs: checked.timeoutMs,
    maxOutputBytes: checked.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  };
}
