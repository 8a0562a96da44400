// Child process for hold-still.test.ts: takes the engine's hold with the containers that write
// `path` held still, says `held`, and waits inside the section until the test kills it (or, with
// `release`, leaves the section after a line on stdin).
// argv: path [release]
import { DockerCli } from '../src/docker-cli.js';
import { EngineApi } from '../src/engine-api.js';
import { holdStill } from '../src/hold-still.js';

const [path, mode] = process.argv.slice(2) as [string, string | undefined];
const engine = new EngineApi(new DockerCli());
await holdStill(engine, { paths: [path] }, async () => {
  process.stdout.write('held\n');
  await new Promise<void>((resolve) => {
    if (mode === 'release') process.stdin.once('data', () => resolve());
    // the lock's socket does not keep the process alive: it waits here until it is killed
    else setInterval(() => {}, 60_000);
  });
});
process.stdout.write('released\n');
