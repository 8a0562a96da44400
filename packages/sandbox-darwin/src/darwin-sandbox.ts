import { constants } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseRunRequest,
  type SandboxCheck,
  type SandboxProbe,
  type SandboxRunRequest,
  type SandboxRunResult,
  type SandboxService,
  SandboxUnavailableError,
} from '@aalis/api-reach';
import { execa } from 'execa';
import { darwinPath } from './darwin-path.js';
import { deniedWritesIn } from './denied-writes.js';
import { runSandboxExec } from './sandbox-exec-process.js';
import { sbplString } from './sbpl-string.js';
import { seatbeltProfile } from './seatbelt-profile.js';

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
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// A real refusal, checked once per service: a file the profile denies must stay unwritten.
async function enforcementCheck(sandboxExec: string): Promise<SandboxCheck> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-darwin-probe-'));
  try {
    const target = join(dir, 'denied');
    const spellings = [...new Set([dir, darwinPath(dir, 'probe')])].map((path) => `(subpath ${sbplString(path, 'probe')})`);
    const profile = `(version 1)\n(allow default)\n(deny file-write* ${spellings.join(' ')})\n`;
    const result = await execa(sandboxExec, ['-p', profile, '--', '/bin/sh', '-c', `echo x > '${target}'`], { reject: false, timeout: 10_000 });
    const written = await readFile(target, 'utf8').then(
      () => true,
      () => false,
    );
    const ok = result.exitCode !== 0 && !written;
    return {
      name: 'sandbox-exec enforces a profile',
      ok,
      detail: ok ? 'a write the profile denies was refused' : `a denied write was not refused (exit ${String(result.exitCode)}, ${written ? 'file written' : 'no file'}): ${result.stderr.trim()}`,
      ...(ok ? {} : { fix: 'run outside another sandbox (sandbox-exec cannot nest) on a macOS that still ships sandbox-exec' }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The macOS sandbox service: each command runs under `sandbox-exec -p PROFILE`, the profile built
 * from the request's policy by {@link seatbeltProfile}. Anywhere but macOS, or on a Mac without a
 * working sandbox-exec, {@link SandboxService.probe} says why and `run` throws
 * {@link SandboxUnavailableError} without running anything.
 */
export function createDarwinSandbox(options: DarwinSandboxOptions = {}): SandboxService {
  const sandboxExec = options.sandboxExec ?? SANDBOX_EXEC;
  const platform = options.platform ?? process.platform;
  let verified: SandboxProbe | undefined;

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

  async function run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    // The contract first, as every backend does, so a bad request reads the same everywhere.
    const checked = parseRunRequest('darwin', request);
    const found = await probe();
    const failed = found.checks.find((check) => !check.ok);
    if (!found.available || failed !== undefined) {
      throw new SandboxUnavailableError('darwin', failed?.detail ?? 'the probe failed', failed?.fix ?? 'run `aalis doctor` to see what is missing');
    }
    const profile = seatbeltProfile(checked.policy);
    if (Buffer.byteLength(profile) > MAX_PROFILE_BYTES) {
      throw new SandboxUnavailableError('darwin', `the profile is ${Buffer.byteLength(profile)} bytes, over the ${MAX_PROFILE_BYTES} a command line can carry`, 'shorten the policy: fewer writable roots or protected paths');
    }
    const outcome = await runSandboxExec({
      sandboxExec,
      profile,
      argv: checked.argv,
      cwd: checked.cwd,
      env: checked.env,
      ...(checked.stdin === undefined ? {} : { stdin: checked.stdin }),
      timeoutMs: checked.timeoutMs,
      maxOutputBytes: checked.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    const deniedWrites = deniedWritesIn(outcome.stderr, checked.policy, checked.cwd);
    return { ...outcome, writeDenied: deniedWrites.length > 0, deniedWrites };
  }

  return { backend: 'darwin', probe, run };
}
