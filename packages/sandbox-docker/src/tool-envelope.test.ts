import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { encodeToolEnvelope, toolRunOutcome } from './tool-envelope.js';

const base = { stdout: '', stderr: '', exitCode: 0, signal: null, timedOut: false, truncated: false, writeDenied: false, deniedWrites: [] };

describe('toolRunOutcome', () => {
  it.each([
    [{ stdout: '{"ok":true,"value":{"a":1}}\n' }, { ok: true, value: { a: 1 } }],
    [{ stdout: '{"ok":false,"kind":"not-found","message":"no such city"}' }, { ok: false, kind: 'tool', message: 'the tool reported not-found: no such city' }],
    // One JSON value is not enough: it must be the result object (002), never guessed from.
    [{ stdout: '{"a":1}' }, { ok: false, kind: 'bad-output' }],
    [{ stdout: '{"ok":true,"value":1}\n{"ok":true,"value":2}' }, { ok: false, kind: 'bad-output' }],
    [{ stdout: '{"ok":"yes","value":1}' }, { ok: false, kind: 'bad-output' }],
    [{ stdout: 'hello' }, { ok: false, kind: 'bad-output' }],
    [{ stdout: '' }, { ok: false, kind: 'bad-output' }],
    [{ exitCode: 2, stderr: 'boom' }, { ok: false, kind: 'exit', message: 'the tool exited with 2: boom' }],
    [{ exitCode: null, signal: 'SIGKILL' }, { ok: false, kind: 'killed' }],
    [{ timedOut: true, exitCode: null, signal: 'SIGKILL' }, { ok: false, kind: 'timeout' }],
    [{ stdout: '{"ok":true,"value":', truncated: true }, { ok: false, kind: 'bad-output' }],
    // a failure after a refused write is said as that refusal; a success keeps its value
    [{ exitCode: 1, stderr: "touch: /etc/x: Read-only file system", writeDenied: true, deniedWrites: ['/etc/x'] }, { ok: false, kind: 'write-denied', message: expect.stringContaining('a write to /etc/x') }],
    [{ stdout: '{"ok":false,"kind":"io","message":"cannot save"}', writeDenied: true, deniedWrites: ['/w/.envrc'], movedAside: [{ path: '/w/.envrc', reason: 'deleted' as const }] }, { ok: false, kind: 'write-denied', message: expect.stringContaining('the sandbox removed /w/.envrc') }],
    [{ stdout: '{"ok":true,"value":1}', writeDenied: true, deniedWrites: ['/etc/x'] }, { ok: true, value: 1 }],
    [{ timedOut: true, exitCode: null, signal: 'SIGKILL', writeDenied: true, deniedWrites: ['/etc/x'] }, { ok: false, kind: 'timeout' }],
  ])('%j -> %j', (result, outcome) => {
    expect(toolRunOutcome({ ...base, ...result })).toMatchObject(outcome);
  });

  it('a value nested past the JSON depth limit is bad output (the model and the console serialize it), one at the limit is taken', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    for (const depth of [64, 200_000]) {
      const outcome = toolRunOutcome({ ...base, stdout: `{"ok":true,"value":${nested(depth)}}` });
      expect(outcome).toMatchObject({ ok: false, kind: 'bad-output', message: expect.stringContaining('nested deeper than 64 levels') });
    }
    // the result object is one level: its value may nest 63 more
    expect(toolRunOutcome({ ...base, stdout: `{"ok":true,"value":${nested(63)}}` })).toMatchObject({ ok: true });
  });
});

describe('encodeToolEnvelope', () => {
  it('carries the tool, its params and the call (id, session, principal) on one line', () => {
    const line = encodeToolEnvelope({ tool: 't', params: { a: 1 }, call: { id: 'c1', session: 's1', principal: 'chat:owner' } });
    expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
    expect(JSON.parse(line)).toEqual({ tool: 't', params: { a: 1 }, call: { id: 'c1', session: 's1', principal: 'chat:owner' } });
  });
});

describe.skipIf(engineSkip)('a stdio tool in a container', () => {
  it('reads the envelope on stdin and answers one JSON result on stdout', async () => {
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-envelope' });
    const result = await box.run({
      argv: ['sh', '-c', 'read -r line; printf "{\\"ok\\":true,\\"value\\":{\\"echo\\":%s,\\"tz\\":\\"%s\\"}}" "$line" "$(date +%z)"'],
      cwd: tempDir(),
      env: {},
      timeoutMs: 20_000,
      policy: policy(),
      sandboxSpec: { profile: 'stdio' },
      stdin: encodeToolEnvelope({ tool: 'datetime', params: { format: 'iso' }, userId: 'u1' }),
    });
    // 002's check that the tool really ran in the container: it sees UTC, not the host's zone.
    expect(toolRunOutcome(result)).toEqual({ ok: true, value: { echo: { tool: 'datetime', params: { format: 'iso' }, user_id: 'u1' }, tz: '+0000' } });
  });

  it('a tool that fails because the container refused its write is write-denied, naming the path', async () => {
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-envelope' });
    const cwd = tempDir();
    const result = await box.run({
      // a stdio tool may write nowhere on the host: its cache write fails, and so does the tool
      argv: ['sh', '-c', `echo x > ${cwd}/cache.json || exit 3; echo '{"ok":true,"value":1}'`],
      cwd,
      env: {},
      timeoutMs: 20_000,
      policy: policy(),
      sandboxSpec: { profile: 'stdio' },
    });
    expect(result).toMatchObject({ exitCode: 3, writeDenied: true, deniedWrites: [`${cwd}/cache.json`] });
    expect(toolRunOutcome(result)).toEqual({ ok: false, kind: 'write-denied', message: expect.stringContaining(`a write to ${cwd}/cache.json`) });
  });
});
