// Child process for the orphan test: starts one long container and is killed by the test mid-run.
import { DockerSandbox } from '../src/docker-sandbox.js';
import { policy, TEST_IMAGE, tempDir } from './engine.js';

const instance = process.argv[2] ?? 'test-orphans';
const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance });
await box.run({ argv: ['sleep', '120'], cwd: tempDir(), env: {}, timeoutMs: 120_000, policy: policy() });
