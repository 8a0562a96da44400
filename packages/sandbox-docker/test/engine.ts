import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/** A fresh real temp directory. */
export function tempDir(prefix = 'aalis-docker-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** The ids of containers with a label (all, or only those in `status`), straight from the engine. */
export function containersLabelled(label: string, status?: 'running'): string[] {
  const which = status === undefined ? ['--all'] : ['--filter', `status=${status}`];
  const out = execFileSync('docker', ['ps', ...which, '--quiet', '--filter', `label=${label}`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() !== '');
}
