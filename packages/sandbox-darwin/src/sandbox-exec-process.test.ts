import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError, StdinStream } from '@aalis/api-reach';
import { afterEach, describe, expect, it } from 'vitest';
import { runSandboxExec, type SandboxExecRun, sandboxExecError } from './sandbox-exec-process.js';

// Process handling with real processes. sandbox-exec itself is replaced by a stand-in that checks
// the argument shape and runs the command unsandboxed (there is no Seatbelt on Linux); what is
// tested here is argv, env, stdin, timeout, output limit and tree kill, not isolation.
const standIn = new URL('../test/fixtures/stand-in-sandbox-exec.pl', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function runOf(argv: [string, ...string[]], more: Partial<SandboxExecRun> = {}): SandboxExecRun {
  const cwd = mkdtempSync(join(tmpdir(), 'aalis-darwin-proc-'));
  dirs.push(cwd);
  return { sandboxExec: standIn, profile: '(version 1)\n(deny default)\n', argv, cwd, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 10_000, maxOutputBytes: 1 << 20, ...more };
}

// A killed orphan stays a zombie where PID 1 does not reap (as in this container): dead all the same.
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return true;
  }
}

describe('runSandboxExec (stand-in sandbox-exec)', () => {
  it('passes the profile parameters as -D; a parameter the profile uses but nobody defined stops the run', async () => {
    const profile = '(version 1)\n(deny default)\n(allow file-write* (subpath (param "P0")))\n';
    const ran = await runSandboxExec(runOf(['/bin/echo', 'ran'], { profile, params: { P0: '/a b/"c"=d' } }));
    expect(ran.stdout).toBe('ran\n');
    await expect(runSandboxExec(runOf(['/bin/echo', 'ran'], { profile }))).rejects.toThrow(/did not run: unbound parameter P0/);
  });

  it('passes argv as given, no shell in between', async () => {
    const out = await runSandboxExec(runOf(['/usr/bin/printf', '%s|', 'a b', '"q"', "it's", '$(x)', '']));
    expect(out).toMatchObject({ stdout: 'a b|"q"|it\'s|$(x)||', exitCode: 0, signal: null, timedOut: false, truncated: false });
  });

  it('gives the command exactly the request env', async () => {
    const out = await runSandboxExec(runOf(['/usr/bin/env'], { env: { ONLY: 'this', PATH: '/bin', 'WITH SPACE': 'v=1' } }));
    expect(out.stdout.split('\n').filter(Boolean).sort()).toEqual(['ONLY=this', 'PATH=/bin', 'WITH SPACE=v=1']);
  });

  it('starts in cwd and feeds stdin', async () => {
    const run = runOf(['/bin/sh', '-c', 'pwd; cat']);
    const out = await runSandboxExec({ ...run, stdin: 'from stdin' });
    expect(out.stdout).toBe(`${run.cwd}\nfrom stdin`);
  });

  // the same feed as the Linux and docker backends (api-reach's feedStdin); Seatbelt itself cannot run here (Linux)
  it('feeds a live stdin as the command reads it: a second line after the first was answered, then EOF; closed at the end', async () => {
    const run = runOf(['/bin/sh', '-c', 'read a; echo "got:$a" > first; od -An -tx1']);
    const stdin = new StdinStream();
    const ran = runSandboxExec({ ...run, stdin });
    stdin.write(new Uint8Array([0x6f, 0x6e, 0x65, 0x0a])); // "one\n"
    while (!existsSync(join(run.cwd, 'first'))) await new Promise((r) => setTimeout(r, 20));
    stdin.write(new Uint8Array([0xff, 0xfe]));
    stdin.end();
    const out = await ran;
    expect(readFileSync(join(run.cwd, 'first'), 'utf8')).toBe('got:one\n');
    expect(out.stdout.trim()).toBe('ff fe'); // bytes that are not UTF-8, as they were written
    expect(out.exitCode).toBe(0);
    expect(stdin.write('late')).toMatchObject({ ok: false });
  });

  it('reports exit codes and signals', async () => {
    expect((await runSandboxExec(runOf(['/bin/sh', '-c', 'exit 7']))).exitCode).toBe(7);
    const killed = await runSandboxExec(runOf(['/bin/sh', '-c', 'kill -TERM $$']));
    expect(killed).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  });

  it('kills the whole tree at the timeout', async () => {
    const run = runOf(['/bin/sh', '-c', 'sleep 30 & echo $! > bg; sleep 30']);
    const started = Date.now();
    const out = await runSandboxExec({ ...run, timeoutMs: 300 });
    expect(out.timedOut).toBe(true);
    expect(out.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(5_000);
    const background = Number(readFileSync(join(run.cwd, 'bg'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(background)).toBe(false);
  });

  it('kills what the command left running when it exits', async () => {
    const run = runOf(['/bin/sh', '-c', 'sleep 30 > /dev/null 2>&1 & echo $! > bg']);
    const out = await runSandboxExec(run);
    expect(out).toMatchObject({ exitCode: 0, timedOut: false });
    const background = Number(readFileSync(join(run.cwd, 'bg'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(background)).toBe(false);
  });

  it('keeps maxOutputBytes of each stream and lets the command finish', async () => {
    const out = await runSandboxExec(runOf(['/bin/sh', '-c', 'head -c 200000 /dev/zero | tr "\\0" x; echo err >&2; exit 3'], { maxOutputBytes: 1000 }));
    expect(out.stdout).toBe('x'.repeat(1000));
    expect(out.stderr).toBe('err\n');
    expect(out).toMatchObject({ truncated: true, exitCode: 3 });
  });

  it('stops on the abort signal', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const out = await runSandboxExec({ ...runOf(['/bin/sleep', '30']), signal: controller.signal });
    expect(out).toMatchObject({ signal: 'SIGKILL', timedOut: false });
  });

  it('a profile sandbox-exec refuses means the command did not run', async () => {
    const run = runOf(['/bin/sh', '-c', 'touch ran']);
    await expect(runSandboxExec({ ...run, profile: '(deny default)' })).rejects.toBeInstanceOf(SandboxUnavailableError);
  });

  it('a missing sandbox-exec is an error, not an empty result', async () => {
    await expect(runSandboxExec({ ...runOf(['/bin/true']), sandboxExec: '/nonexistent/sandbox-exec' })).rejects.toThrow(/could not be started/);
  });

  it('a command that cannot be found is the command failing, reported as a result', async () => {
    const out = await runSandboxExec(runOf(['no-such-command-here']));
    expect(out.exitCode).toBe(71);
    expect(out.stderr).toMatch(/execvp\(\) of 'no-such-command-here' failed/);
  });
});

describe('sandboxExecError', () => {
  it.each([
    ['sandbox-exec: unbound variable: foo\n', 65, 'unbound variable: foo'],
    ['sandbox-exec: sandbox_apply: Operation not permitted\n', 71, 'sandbox_apply: Operation not permitted'],
    ["sandbox-exec: execvp() of 'x' failed: No such file or directory\n", 71, undefined],
    ['sandbox-exec: anything\n', 0, undefined],
    ['touch: x: Operation not permitted\n', 1, undefined],
  ])('%j exit %s → %j', (stderr, code, expected) => {
    expect(sandboxExecError(stderr, code)).toBe(expected);
  });
});
