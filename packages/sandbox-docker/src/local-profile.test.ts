import { execFile } from 'node:child_process';
import type { SandboxPlan, SandboxProbe, SandboxRunRequest, SandboxRunResult, SandboxService } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { policy, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';

/**
 * A host backend that spawns the argv with exactly the env it is handed: it stands in for
 * sandbox-linux, which this package may not import, and runs a real process.
 */
class PlainSpawn implements SandboxService {
  readonly backend = 'linux' as const;
  async probe(): Promise<SandboxProbe> {
    return { backend: 'linux', available: true, checks: [] };
  }
  async plan(request: SandboxRunRequest): Promise<SandboxPlan> {
    return { backend: 'linux', argv: request.argv, env: request.env, mounts: [], files: [], pre: [], post: [] };
  }
  run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    const [file, ...args] = request.argv;
    return new Promise((resolve) => {
      execFile(file, args, { cwd: request.cwd, env: { ...request.env } }, (error, stdout, stderr) => {
        resolve({ stdout, stderr, exitCode: error ? 1 : 0, signal: null, timedOut: false, truncated: false, writeDenied: false, deniedWrites: [] });
      });
    });
  }
}

describe('profile local', () => {
  it('runs through the host sandbox with the env cut to the allow list (002: env_clear + allow list)', async () => {
    const box = new DockerSandbox({ images: { stdio: 'unused' }, instance: 'test-local', local: new PlainSpawn() });
    const result = await box.run({
      argv: ['/usr/bin/env'],
      cwd: tempDir(),
      env: { LANG: 'C', TOOL_X: '1', SECRET: 's', PATH: '/usr/bin:/bin' },
      timeoutMs: 5000,
      policy: policy(),
      sandboxSpec: { profile: 'local', env: ['TOOL_X'] },
    });
    expect(result.stdout.trim().split('\n').sort()).toEqual(['HOME=/tmp', 'LANG=C', 'PATH=/usr/bin:/bin', 'TOOL_X=1']);
  });
});
