/*
 * Live stdin through the Linux sandbox, as one set of scenarios that stdin-stream.test.ts runs in
 * its own process (root) and, through stdin.child.testing.ts, as nobody. Each answers plain data,
 * compared with STDIN_EXPECTED. What a command has done while it runs is seen on the host in the
 * run's upper layer (the overlay model), where its writes wait until the run ends.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { StdinStream } from '@aalis/api-reach';
import { req, type Scene, until } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

/** Names the commands of the runs in `tmpDir` have made at the top of the workspace so far (in their upper layers). */
export function writtenSoFar(tmpDir: string): string[] {
  const names: string[] = [];
  for (const run of readdirSync(tmpDir).filter((n) => n.startsWith('aalis-sbx-'))) {
    const layers = join(tmpDir, run, 'overlay');
    if (!existsSync(layers)) continue;
    for (const layer of readdirSync(layers)) {
      const upper = join(layers, layer, 'upper');
      if (existsSync(upper)) names.push(...readdirSync(upper));
    }
  }
  return names;
}

/** What the scenarios should answer, wherever they run. */
export const STDIN_EXPECTED = {
  twoTimes: { stdout: 'got:one\nmatch\n', exitCode: 0 },
  eof: { stdout: 'first\nsecond', exitCode: 0 },
  bytes: { stdout: ' ff 00 fe 80 0a c3\n', exitCode: 0 },
  neverReads: { full: true, boundHeld: true, signal: 'SIGKILL', timedOut: false, closed: 'closed' },
} as const;

/**
 * A command that reads a line, says so by a file, then makes up a random token (a file named
 * after it) and reads a second line that must be that token: only a writer that saw the first
 * answer can give the second, so the input cannot have been given whole at the start.
 */
export async function twoTimes(sb: LinuxSandbox, s: Scene, tmpDir: string): Promise<{ stdout: string; exitCode: number | null }> {
  const stdin = new StdinStream();
  const script = 'read a; touch "got-$a"; echo "got:$a"; t=$(od -An -N6 -tx1 /dev/urandom | tr -d " \\n"); touch "tok-$t"; read b; [ "$b" = "$t" ] && echo match';
  const run = sb.run(req(s, ['sh', '-c', script], { stdin }));
  const failed = run.then(() => 'ended early', (e: Error) => e.message);
  stdin.write('one\n');
  const token = () => writtenSoFar(tmpDir).find((n) => n.startsWith('tok-'));
  await Promise.race([until(() => token() !== undefined, 'the first line read and the token made'), failed.then((why) => Promise.reject(new Error(why)))]);
  stdin.write(`${token()!.slice(4)}\n`);
  stdin.end();
  const r = await run;
  return { stdout: r.stdout, exitCode: r.exitCode };
}

/** `cat` reads to EOF: it ends once the input is ended. */
export async function eof(sb: LinuxSandbox, s: Scene): Promise<{ stdout: string; exitCode: number | null }> {
  const stdin = new StdinStream();
  const run = sb.run(req(s, ['cat'], { stdin }));
  stdin.write('first\n');
  stdin.write('second');
  stdin.end();
  const r = await run;
  return { stdout: r.stdout, exitCode: r.exitCode };
}

/** Bytes that are not UTF-8 reach the command as they are. */
export async function bytes(sb: LinuxSandbox, s: Scene): Promise<{ stdout: string; exitCode: number | null }> {
  const stdin = new StdinStream();
  const run = sb.run(req(s, ['od', '-An', '-tx1'], { stdin }));
  stdin.write(new Uint8Array([0xff, 0x00, 0xfe]));
  stdin.write(new Uint8Array([0x80, 0x0a, 0xc3])); // a UTF-8 lead byte with nothing after it
  stdin.end();
  const r = await run;
  return { stdout: r.stdout, exitCode: r.exitCode };
}

/**
 * A command that never reads: writes are refused once the bound is reached (what the daemon
 * holds stays bounded), and killing the command with input pending closes the input.
 */
export async function neverReads(sb: LinuxSandbox, s: Scene): Promise<{ full: boolean; boundHeld: boolean; signal: string | null; timedOut: boolean; closed: string }> {
  const bound = 256 * 1024;
  const stdin = new StdinStream({ maxPendingBytes: bound });
  const abort = new AbortController();
  const run = sb.run(req(s, ['sh', '-c', 'touch never-reads; exec sleep 600'], { stdin, signal: abort.signal, timeoutMs: 600_000 }));
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  let full = false;
  let boundHeld = true;
  for (let i = 0; i < 4096 && !full; i++) {
    const w = stdin.write(chunk);
    if (!w.ok) full = w.reason === 'full';
    if (stdin.pending > bound) boundHeld = false;
    await new Promise((r) => setImmediate(r)); // the feed takes what the pipe accepts
  }
  abort.abort();
  const r = await run;
  return { full, boundHeld, signal: r.signal, timedOut: r.timedOut, closed: stdin.state };
}
