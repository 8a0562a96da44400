import { type SandboxService, SandboxUnavailableError } from '@aalis/api-reach';
import { DockerSandbox } from '@aalis/sandbox-docker';

/**
 * The docker backend for a one-shot CLI run. The image comes from `AALIS_DOCKER_IMAGE` (built
 * locally: see packages/sandbox-docker/scripts/prepare.sh); without one the backend is
 * unavailable and nothing runs. Every run first removes the containers earlier CLI runs left
 * behind when they were killed (their owner provably dead, or their own deadline passed);
 * a running CLI's containers are never touched.
 */
export async function dockerSandboxFromEnv(env: NodeJS.ProcessEnv): Promise<SandboxService> {
  const image = env.AALIS_DOCKER_IMAGE;
  if (!image) {
    throw new SandboxUnavailableError('docker', 'no image is configured for the docker backend', 'build one (bash packages/sandbox-docker/scripts/prepare.sh prints its tag) and set AALIS_DOCKER_IMAGE=<tag>');
  }
  const box = new DockerSandbox({
    images: { stdio: image, network: env.AALIS_DOCKER_NETWORK_IMAGE ?? image },
    instance: env.AALIS_INSTANCE ?? 'cli',
    defaultSpec: { profile: 'network' },
  });
  // No engine: the probe says so and the command does not run; reaping waits for a later run.
  await box.reapOrphans().catch(() => 0);
  return box;
}
