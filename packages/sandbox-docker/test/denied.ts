// Child process for engine-denied.test.ts: run as a user the engine's socket refuses; a run and a
// section each print the error they were refused with (code, message, fix), then the probe's
// engine check, one JSON per line.
import type { SandboxPolicy } from '@aalis/api-reach';
import { DockerCli } from '../src/docker-cli.js';
import { DockerSandbox } from '../src/docker-sandbox.js';
import { EngineApi } from '../src/engine-api.js';
import { holdStill } from '../src/hold-still.js';

const image = process.argv[2] ?? 'aalis/sandbox-test:latest';
const policy: SandboxPolicy = { readDeny: [], readAllowWithin: [], write: [], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [] };
const said = (e: unknown) => {
  const { code, message, fix } = e as { code?: string; message: string; fix?: string };
  process.stdout.write(`${JSON.stringify({ code, message, fix })}\n`);
};
await new DockerSandbox({ images: { stdio: image }, instance: 'test-denied' }).run({ argv: ['true'], cwd: '/', env: {}, timeoutMs: 10_000, policy }).then(() => said({ message: 'ran' }), said);
await holdStill(new EngineApi(new DockerCli()), { paths: ['/nowhere'] }, async () => said({ message: 'held' })).catch(said);
const engine = (await new DockerSandbox({ images: { stdio: image }, instance: 'test-denied' }).probe()).checks.find((c) => c.name === 'engine');
process.stdout.write(`${JSON.stringify({ code: engine?.ok ? 'ok' : 'probe', message: engine?.detail ?? '', fix: engine?.fix })}\n`);
