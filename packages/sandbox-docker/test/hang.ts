// Child process for the orphan tests: starts one long container and is killed by the test mid-run.
// argv: instance [timeoutMs] [dataRoot: run it as a deployment user's command instead]
import { DockerDeployment } from '../src/docker-deployment.js';
import { DockerSandbox } from '../src/docker-sandbox.js';
import { policy, TEST_IMAGE, tempDir } from './engine.js';

const instance = process.argv[2] ?? 'test-orphans';
const timeoutMs = Number(process.argv[3] ?? 120_000);
const dataRoot = process.argv[4];
if (dataRoot === undefined) {
  const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance });
  await box.run({ argv: ['sleep', '120'], cwd: tempDir(), env: {}, timeoutMs, policy: policy() });
} else {
  const deployment = await DockerDeployment.start({ dataRoot, images: { stdio: TEST_IMAGE }, instance });
  const user = await deployment.user('hang');
  await user.sandbox.run({ argv: ['sleep', '120'], cwd: user.workspace, env: {}, timeoutMs, policy: user.policy('readonly') });
}
