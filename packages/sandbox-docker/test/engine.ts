import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { makeProcessDir } from '@aalis/core';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';

/** The image scripts/prepare.sh builds. */
export const TEST_IMAGE = process.env.AALIS_SANDBOX_TEST_IMAGE ?? 'aalis/sandbox-test:latest';

function check(): string | undefined {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'pipe', timeout: 15_000 });
  } catch (error) {
    return `no Docker Engine answers (${(error as Error).message.split('\n')[0]}); run packages/sandbox-docker/scripts/prepare.sh as root`;
  }
  try {
    execFileSync('docker', ['image', 'inspect', TEST_IMAGE], { stdio: 'pipe', timeout: 15_000 });
  } catch {
    return `the test image ${TEST_IMAGE} is missing; run packages/sandbox-docker/scripts/prepare.sh`;
  }
  return undefined;
}

/**
 * Why the real-engine tests cannot run here, or undefined when they can. In CI (CI=true) a
 * missing engine is a failure, never a skip: see {@link engineSkip}.
 */
export const engineMissing = check();

/** Whether to skip the real-engine tests: only outside CI, and then the reason is printed. */
export const engineSkip = engineMissing !== undefined && process.env.CI !== 'true';
if (engineSkip) console.warn(`sandbox-docker: skipping real-engine tests: ${engineMissing}`);

/** A policy that grants nothing, with the given layers. */
export function policy(layers: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return { readDeny: [], readAllowWithin: [], write: [], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [], ...layers };
}

/** A fresh real temp directory, in this test process's own folder there: removed when the process exits, or by a later run once it is gone (a full run left over a hundred behind). */
export function tempDir(prefix = 'aalis-docker-'): string {
  ownDir ??= makeProcessDir(tmpdir(), 'aalis-docker-run-');
  return realpathSync(mkdtempSync(join(ownDir, prefix)));
}

let ownDir: string | undefined;

/** The ids of containers with a label (all, or only those in `status`), straight from the engine. */
export function containersLabelled(label: string, status?: 'running'): string[] {
  const which = status === undefined ? ['--all'] : ['--filter', `status=${status}`];
  const out = execFileSync('docker', ['ps', ...which, '--quiet', '--filter', `label=${label}`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() !== '');
}

/**
 * Resolves once `check` holds, looking every 200 ms (each look is a `docker ps`); throws after
 * `timeoutMs`. Generous by default: the limit only decides how long a failing test takes to say
 * so, and an engine on a loaded machine can take many seconds to start a container.
 */
export async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting (${timeoutMs} ms)`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A directory the container's user can read (a temp dir is 0700, root's) and a shell loop that
 * returns once the test calls `open()`: a container waits at it instead of sleeping a guessed time.
 */
export function gate(): { readonly dir: string; readonly wait: string; open(): void } {
  const dir = tempDir('aalis-gate-');
  chmodSync(dir, 0o755);
  const file = join(dir, 'go');
  return { dir, wait: `until [ -e '${file}' ]; do sleep 0.1; done`, open: () => writeFileSync(file, '') };
}
