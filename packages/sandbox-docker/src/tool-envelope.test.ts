import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { encodeToolEnvelope, toolOutcome } from './tool-envelope.js';

const base = { stdout: '', stderr: '', exitCode: 0, signal: null, timedOut: false, truncated: false, writeDenied: false, deniedWrites: [] };

describe('toolOutcome', () => {
  it.each([
    [{ stdout: '{"a":1}\n' }, { ok: true, value: { a: 1 } }],
    [{ stdout: 'hello' }, { ok: false, kind: 'bad-output' }],
    [{ exitCode: 2, stderr: 'boom' }, { ok: false, kind: 'exit', message: 'the tool exited with 2: boom' }],
    [{ exitCode: null, signal: 'SIGKILL' }, { ok: false, kind: 'killed' }],
    [{ timedOut: true, exitCode: null, signal: 'SIGKILL' }, { ok: false, kind: 'timeout' }],
    [{ stdout: '{"a":', truncated: true }, { ok: false, kind: 'bad-output' }],
  ])('%j -> %j', (result, outcome) => {
    expect(toolOutcome({ ...base, ...result })).toMatchObject(outcome);
  });
});

describe.skipIf(engineSkip)('a stdio tool in a container', () => {
  it('reads the envelope on stdin and answers JSON on stdout', async () => {
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-envelope' });
    const result = await box.run({
      argv: ['sh', '-c', 'read -r line; printf "{\\"echo\\":%s,\\"tz\\":\\"%s\\"}" "$line" "$(date +%z)"'],
      cwd: tempDir(),
      env: {},
      timeoutMs: 20_000,
      policy: policy(),
      sandboxSpec: { profile: 'stdio' },
      stdin: encodeToolEnvelope({ tool: 'datetime', params: { format: 'iso' }, userId: 'u1' }),
    });
    // 002's check that the tool really ran in the container: it sees UTC, not the host's zone.
    expect(toolOutcome(result)).toEqual({ ok: true, value: { echo: { tool: 'datetime', params: { format: 'iso' }, user_id: 'u1' }, tz: '+0000' } });
  });
});
