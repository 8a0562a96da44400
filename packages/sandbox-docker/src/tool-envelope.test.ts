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
  ])('%j -> %j', (result, outcome) => {
    expect(toolRunOutcome({ ...base, ...result })).toMatchObject(outcome);
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
});
