import { type SandboxService, SandboxUnavailableError } from '@aalis/api-reach';
import { join } from 'node:path';
import { DockerSandbox, PREPARE_SCRIPT_HINT } from '@aalis/sandbox-docker';

/**
 * The docker backend for a one-shot CLI run. The image comes from `AALIS_DOCKER_IMAGE` (built
 * locally: see sandbox-docker's scripts/prepare.sh); without one the backend is
 * unavailable and nothing runs. Every run first removes the containers earlier CLI runs left
 * behind when they were killed (their owner provably dead, or their own deadline passed);
 * a running CLI's containers are never touched. With `cacheDir`, the probe's good result is kept
 * in `<cacheDir>/docker-probe.json` for ten minutes, so each run does not start a probe container.
 */
export async function dockerSandboxFromEnv(env: NodeJS.ProcessEnv, cacheDir?: string): Promise<SandboxService> {
  const image = env.AALIS_DOCKER_IMAGE;
  if (!image) {
    throw new SandboxUnavailableError('docker', 'no image is configured for the docker backend', `set AALIS_DOCKER_IMAGE=<tag> to a local image with a POSIX shell; ${PREPARE_SCRIPT_HINT} builds one without a registry and prints its tag`);
  }
  const box = new DockerSandbox({
    images: { stdio: image, network: env.AALIS_DOCKER_NETWORK_IMAGE ?? image },
    instance: env.AALIS_INSTANCE ?? 'cli',
    defaultSpec: { profile: 'network' },
    ...(cacheDir !== undefined ? { probeCache: { file: join(cacheDir, 'docker-probe.json') } } : {}),
  });
  // No engine: the probe says so and the command does not run; reaping waits for a later run.
  await box.reapOrphans().catch(() => 0);
  return box;
}
