import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HostPaths, protectedLists, resolveReach, SandboxRequestError, type SandboxService, sandboxPolicyOf } from '@aalis/api-reach';
import { createDarwinSandbox } from '@aalis/sandbox-darwin';
import { DockerSandbox } from '@aalis/sandbox-docker';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, describe, expect, it } from 'vitest';

// The same run request, given to each of the three backends through its real `run`, gets the same
// answer: refused with the same field, problem and fix before anything runs, or let through.
// Linux runs for real in bubblewrap. Darwin runs its validation here and then reports itself
// unavailable (no Seatbelt on Linux). Docker's client is a script that logs every call, so
// "nothing ran" means the engine was never asked.

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-contract-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(home, 'ws');
const data = join(home, '.aalis');
const paths: HostPaths = {
  install: join(root, 'install'),
  data,
  workspace: join(data, 'workspace'),
  tmp: join(data, 'tmp'),
  self: join(data, 'self'),
  logs: join(data, 'logs'),
  config: join(data, 'config.yaml'),
  secrets: join(data, 'secrets.yaml'),
};
for (const dir of [ws, paths.install, paths.workspace, paths.self, paths.logs, join(paths.tmp, 's1')]) mkdirSync(dir, { recursive: true });

const lists = protectedLists({ paths, userHome: home, platform: 'linux', form: 'source', codeDirs: [] });
const policy = sandboxPolicyOf(
  resolveReach({ principal: 'owner', tier: 'workspace', onBoundary: 'ask', place: { home: ws }, gitDirs: [], sessionTmp: join(paths.tmp, 's1'), localPorts: [], lists, paths }),
);

const dockerLog = join(root, 'docker-calls.log');
const dockerClient = join(root, 'docker');
writeFileSync(dockerClient, `#!/bin/sh\necho "$@" >> '${dockerLog}'\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n`);
chmodSync(dockerClient, 0o755);

const backends: Record<'linux' | 'darwin' | 'docker', SandboxService> = {
  linux: createLinuxSandbox({ tmpDir: join(root, 'runs') }),
  darwin: createDarwinSandbox({ platform: 'linux' }),
  docker: new DockerSandbox({ images: { stdio: 'aalis-test:none' }, instance: 'contract-test', client: { binary: dockerClient, env: { PATH: '/usr/bin:/bin' } } }),
};
mkdirSync(join(root, 'runs'));

let marks = 0;
/** A request whose command, if it ever ran, leaves a file behind; with one field changed or removed. */
function requestFor(change: (request: Record<string, unknown>, p: Record<string, unknown>) => void) {
  const marker = join(ws, `ran-${++marks}`);
  const p: Record<string, unknown> = { ...(policy as unknown as Record<string, unknown>) };
  const request: Record<string, unknown> = { argv: ['/bin/sh', '-c', `: > '${marker}'`], cwd: ws, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, policy: p };
  change(request, p);
  return { request, marker };
}

type Answer = { readonly refused: false } | { readonly refused: true; readonly field: string; readonly problem: string; readonly fix: string; readonly message: string };

async function answerOf(backend: SandboxService, request: unknown): Promise<Answer> {
  try {
    await backend.run(request as Parameters<SandboxService['run']>[0]);
    return { refused: false };
  } catch (error) {
    if (!(error instanceof SandboxRequestError)) return { refused: false }; // it got past the contract: unavailable here, or the engine
    const { field, problem, fix } = error;
    return { refused: true, field, problem, fix, message: error.message.replace(`the ${backend.backend} sandbox`, 'the sandbox') };
  }
}

/** Changes a request (or its policy) from the valid one. */
type Change = (request: Record<string, unknown>, policy: Record<string, unknown>) => void;

const TEN_DAYS = 10 * 24 * 60 * 60 * 1000;

describe('the run-request contract, the same on every backend', () => {
  it.each<[string, Change, string]>([
    ['an argument with a NUL byte', (r) => { r.argv = [...(r.argv as string[]), 'a\0b']; }, 'argv[3]'],
    ['an empty program', (r) => { r.argv = ['']; }, 'argv[0]'],
    ['a relative cwd', (r) => { r.cwd = 'ws'; }, 'cwd'],
    ['a variable name with "="', (r) => { r.env = { 'A=B': '1' }; }, 'env.A=B'],
    ['a 10-day timeout', (r) => { r.timeoutMs = TEN_DAYS; }, 'timeoutMs'],
    ['an unknown request field', (r) => { r.timeout = 5; }, 'timeout'],
    ['an unknown policy field', (_r, p) => { p.readAllow = ['/']; }, 'policy.readAllow'],
    ['a policy without controlDeny', (_r, p) => { delete p.controlDeny; }, 'policy.controlDeny'],
    ['a relative writable root', (_r, p) => { p.write = ['ws']; }, 'policy.write[0]'],
    ['a pattern no backend can translate', (_r, p) => { p.writeDeny = [{ pattern: '(?=x)' }]; }, 'policy.writeDeny[0].pattern'],
  ])('%s: each backend refuses it alike and nothing runs', async (_what, change, field) => {
    const answers: Answer[] = [];
    for (const backend of Object.values(backends)) {
      const { request, marker } = requestFor(change);
      answers.push(await answerOf(backend, request));
      expect(existsSync(marker), `${backend.backend} ran the command`).toBe(false);
    }
    expect(answers[0]).toMatchObject({ refused: true, field });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(existsSync(dockerLog), 'the docker client was called').toBe(false);
  });

  it('a valid request gets past the contract on every backend, and runs where it can', async () => {
    for (const backend of Object.values(backends)) {
      const { request } = requestFor(() => {});
      expect(await answerOf(backend, request), backend.backend).toEqual({ refused: false });
    }
    const { request, marker } = requestFor(() => {});
    const result = await backends.linux.run(request as unknown as Parameters<SandboxService['run']>[0]);
    expect(result.exitCode).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(readFileSync(dockerLog, 'utf8')).not.toBe(''); // docker went on to ask its engine
  });
});

describe('docker sessions, checked by the same contract', () => {
  const docker = backends.docker as DockerSandbox;

  it('refuses to open a session for a policy without controlDeny, naming it, before the engine is asked', async () => {
    const { controlDeny: _gone, ...partial } = policy;
    const calls = () => (existsSync(dockerLog) ? readFileSync(dockerLog, 'utf8') : '');
    const before = calls();
    const error = await docker.openSession({ cwd: ws, env: {}, policy: partial as typeof policy }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxRequestError);
    expect(error).toMatchObject({ backend: 'docker', field: 'policy.controlDeny', problem: 'is missing' });
    expect(calls()).toBe(before);
  });
});
