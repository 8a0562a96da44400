import { type SandboxService, SandboxUnavailableError } from '@aalis/api-reach';
import { DockerSandbox } from '@aalis/sandbox-docker';

/**
 * The docker backend for a one-shot CLI run. The image comes from `AALIS_DOCKER_IMAGE` (built
 * locally: see packages/sandbox-docker/scripts/prepare.sh); without one the backend is
 * unavailable and nothing runs.
 */
export function dockerSandboxFromEnv(env: NodeJS.ProcessEnv): SandboxService {
  const image = env.AALIS_DOCKER_IMAGE;
  if (!image) {
    throw new SandboxUnavailableError('docker', 'no image is configured for the docker backend', 'build one (bash packages/sandbox-docker/scripts/prepare.sh prints its tag) and set AALIS_DOCKER_IMAGE=<tag>');
  }
  return new DockerSandbox({
    images: { stdio: image, network: env.AALIS_DOCKER_NETWORK_IMAGE ?? image },
    instance: env.AALIS_INSTANCE ?? 'cli',
    defaultSpec: { profile: 'network' },
  });
}
