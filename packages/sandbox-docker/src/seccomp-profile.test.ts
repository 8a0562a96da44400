import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dockerSeccompProfile } from './seccomp-profile.js';

/*
 * The profile file each process writes for the docker client (seccomp-profile.ts): real node
 * processes write it, exit or are killed, and what they leave in the temp directory is looked at.
 */

const parent = mkdtempSync(join(tmpdir(), 'aalis-profile-test-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

/** A node process that writes its profile in `parent`, says where, and then exits (`exit`) or waits to be killed. */
function writer(then: 'exit' | 'wait'): { child: ChildProcess; file: Promise<string> } {
  const module = join(import.meta.dirname, 'seccomp-profile.ts');
  const script = `import { dockerSeccompProfileFile } from ${JSON.stringify(module)}; console.log(dockerSeccompProfileFile(${JSON.stringify(parent)}));${then === 'wait' ? ' setInterval(() => {}, 1000);' : ''}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const file = new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) res(out.trim());
    });
    child.on('exit', (code) => rej(new Error(`the writer ended (${code}) before it said where`)));
  });
  return { child, file };
}

const exited = (child: ChildProcess) => new Promise<void>((res) => (child.exitCode !== null || child.signalCode !== null ? res() : child.on('exit', () => res())));

describe('the seccomp profile file', { timeout: 60_000 }, () => {
  it('goes with the process that wrote it', async () => {
    const { child, file } = writer('exit');
    const path = await file;
    await exited(child);
    expect(path.startsWith(join(parent, `aalis-seccomp-${child.pid}-`))).toBe(true);
    expect(existsSync(dirname(path))).toBe(false);
  });

  it("is the profile, read-only, in a folder only this user enters; a killed writer's folder goes at the next writer's start", async () => {
    const killed = writer('wait');
    const path = await killed.file;
    expect(statSync(path).mode & 0o777).toBe(0o400);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(JSON.parse(JSON.stringify(dockerSeccompProfile())));
    killed.child.kill('SIGKILL');
    await exited(killed.child);
    expect(existsSync(path)).toBe(true); // no exit handler ran
    const next = writer('exit');
    await next.file;
    await exited(next.child);
    expect(readdirSync(parent)).toEqual([]); // the killed one's swept as the next wrote, the next's gone with it
  });
});
