import { readdirSync } from 'node:fs';
import { StdinStream } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { type DockerRunRequest, DockerSandbox } from './docker-sandbox.js';

/*
 * A container's stdin fed while it runs (api-reach's StdinStream through the client's attached
 * stdin): the Linux backend's scenarios (sandbox-linux's stdin-stream.test.ts) against a real
 * engine. What the command did between two writes is seen in its writable workspace on the host.
 */

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-stdin' });

function sh(script: string, extra: Partial<DockerRunRequest> = {}): DockerRunRequest {
  const ws = tempDir();
  return { argv: ['sh', '-c', script], cwd: ws, env: {}, timeoutMs: 60_000, policy: policy({ write: [ws] }), identity: 'owner', ...extra };
}

/** Resolves once `cond` holds, looking every 20 ms (the test's own timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

describe.skipIf(engineSkip)('live stdin into a container on a real engine', { timeout: 120_000 }, () => {
  it('two lines written at two times: the second is a token the command made after reading the first', async () => {
    const stdin = new StdinStream();
    const request = sh('read a; echo "got:$a"; t=$(od -An -N6 -tx1 /dev/urandom | tr -d " \\n"); touch "tok-$t"; read b; [ "$b" = "$t" ] && echo match', { stdin });
    const run = box.run(request);
    stdin.write('one\n');
    const token = () => readdirSync(request.cwd).find((n) => n.startsWith('tok-'));
    await until(() => token() !== undefined);
    stdin.write(`${token()!.slice(4)}\n`);
    stdin.end();
    const r = await run;
    expect({ stdout: r.stdout, exitCode: r.exitCode }).toEqual({ stdout: 'got:one\nmatch\n', exitCode: 0 });
  });

  it('ending the input ends cat; bytes that are not UTF-8 pass through', async () => {
    const stdin = new StdinStream();
    const run = box.run(sh('od -An -tx1', { stdin }));
    stdin.write(new Uint8Array([0xff, 0x00, 0xfe]));
    stdin.write(new Uint8Array([0x80, 0x0a, 0xc3]));
    stdin.end();
    const r = await run;
    expect(r.stdout.replace(/\s+/g, ' ').trim()).toBe('ff 00 fe 80 0a c3');
    expect(r.exitCode).toBe(0);
  });

  it('a command that never reads: writes refused at the bound; killed with input pending, the input is closed', async () => {
    const bound = 256 * 1024;
    const stdin = new StdinStream({ maxPendingBytes: bound });
    const abort = new AbortController();
    const request = sh('touch started; exec sleep 600', { stdin, signal: abort.signal, timeoutMs: 600_000 });
    const run = box.run(request);
    // written once the command runs, so the whole chain (client, engine, container) is what holds back
    await until(() => readdirSync(request.cwd).includes('started'));
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    let full = false;
    for (let i = 0; i < 4096 && !full; i++) {
      const w = stdin.write(chunk);
      if (!w.ok) full = w.reason === 'full';
      expect(stdin.pending).toBeLessThanOrEqual(bound);
      await new Promise((r) => setImmediate(r));
    }
    expect(full).toBe(true);
    abort.abort();
    await run;
    expect(stdin.state).toBe('closed');
    expect(stdin.write('late')).toMatchObject({ ok: false, reason: 'closed' });
  });

  it('a session container: an exec reads its live input', async () => {
    const session = await box.openSession({ cwd: tempDir(), env: {}, policy: policy() });
    try {
      const stdin = new StdinStream();
      const run = session.exec({ argv: ['sh', '-c', 'read a; echo "got:$a"; cat'], stdin, timeoutMs: 60_000 });
      stdin.write('one\nrest');
      stdin.end();
      expect((await run).stdout).toBe('got:one\nrest');
    } finally {
      await session.close();
    }
  });
});
