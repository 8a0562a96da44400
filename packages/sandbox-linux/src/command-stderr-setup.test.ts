import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { SandboxRunRequest } from '@aalis/api-reach';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { makeScene, type OverlayScene, overlayScene, req, workspacePolicy } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

/*
 * bwrap's setup errors and the command's stderr share one stream, and both exit 1. A command that
 * printed "bwrap: ..." was taken for a failed setup: reported as "nothing was run", and where the
 * text read like a transient failure (a vanished mount, the loopback race), run again, up to five
 * times. Each run of the command here connects once to a socket on the host, so the runs are
 * counted by something the command cannot fake.
 */

const isRoot = process.getuid?.() === 0;
const child = join(import.meta.dirname, 'command-stderr-setup.child.testing.ts');
const nobodyOk = canRunAsNobody(child);

let s: OverlayScene;
let server: Server;
let calls = 0;
beforeAll(async () => {
  s = await overlayScene();
  server = createServer((c) => {
    calls++;
    c.end();
  });
  await new Promise<void>((r) => server.listen(join(s.ws, 'count.sock'), r));
});
afterAll(() => {
  server?.close();
  s?.cleanup();
});

/** Connects to the counting socket, writes `line` to stderr, exits 1. */
const knock = (line: string): [string, ...string[]] => ['sh', '-c', 'socat -u OPEN:/dev/null UNIX-CONNECT:count.sock && printf "%s\\n" "$1" >&2; exit 1', 'sh', line];

const lines: [string, string][] = [
  ['the loopback race', 'bwrap: loopback: Failed RTM_NEWADDR: File exists'],
  ['a vanished mount', 'bwrap: Can\'t bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount "/newroot/no/such/dir": No such file or directory'],
  ['a vanished source of a bind', `bwrap: Can't find source path ${'/no/such/sock'}: No such file or directory`],
  ['any setup error', "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"],
];

async function outcome(sb: LinuxSandbox, r: SandboxRunRequest): Promise<{ exitCode?: number | null; stderr?: string; error?: string }> {
  try {
    const x = await sb.run(r);
    return { exitCode: x.exitCode, stderr: x.stderr };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

describe("a command whose stderr reads like bubblewrap's", { timeout: 240_000 }, () => {
  const setups: { name: string; network?: boolean; prepared?: boolean }[] = [
    { name: 'a fresh sandbox' },
    ...(isRoot ? [{ name: 'network on (bwrap waits just before the command)', network: true }, { name: 'a prepared sandbox', prepared: true }] : []),
  ];
  for (const { name, network, prepared } of setups) {
    it.each(lines)(`${name}, %s: the command ran once, and was never retried`, async (_, line) => {
      const sb = s.sandbox(prepared ? { prepare: 'on' } : {});
      try {
        const r = req(s, knock(line), network ? { policy: workspacePolicy(s, { network: 'on' }) } : {});
        if (prepared) {
          await sb.run({ ...r, argv: ['true'] });
          await sb.preparationsSettled();
        }
        const before = sb.preparedCounts().used;
        calls = 0;
        const got = await outcome(sb, r);
        expect(calls).toBe(1);
        if (prepared) expect(sb.preparedCounts().used).toBe(before + 1);
        expect(got).toEqual({ exitCode: 1, stderr: `${line}\n` });
      } finally {
        await sb.close();
      }
    });
  }

  // Not a sandbox that could not start (that sent a typo to `aalis doctor`): the command's result,
  // as a shell gives it, 127 with the name; still never retried, and the shim's token not shown
  it.each([false, ...(isRoot ? [true] : [])])('a command that is not there is its result, 127 (launch-state.ts commandNotRun), not a setup error (prepared: %s)', async (prepared) => {
    const sb = s.sandbox(prepared ? { prepare: 'on' } : {});
    try {
      if (prepared) {
        await sb.run(req(s, ['true']));
        await sb.preparationsSettled();
      }
      const before = sb.preparedCounts().used;
      const got = await outcome(sb, req(s, ['no-such-command-here']));
      if (prepared) expect(sb.preparedCounts().used).toBe(before + 1);
      expect(got).toEqual({ exitCode: 127, stderr: 'aalis: no-such-command-here: command not found in the sandbox (or the interpreter its #! line names)\n' });
    } finally {
      await sb.close();
    }
  });

  it.skipIf(!nobodyOk)('run by an unprivileged daemon (nobody): the command ran once, its exit is the result', async () => {
    const mine = makeScene();
    const counter = createServer((c) => {
      calls++;
      c.end();
    });
    try {
      await new Promise<void>((r) => counter.listen(join(mine.ws, 'count.sock'), r));
      chmodSync(join(mine.ws, 'count.sock'), 0o777);
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, mine.root]);
      for (const [, line] of lines) {
        calls = 0;
        const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(mine), JSON.stringify(knock(line)));
        const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 100_000 });
        expect(r.stderr).toBe('');
        expect(JSON.parse(r.stdout)).toEqual({ exitCode: 1, stderr: `${line}\n` });
        expect(calls).toBe(1);
      }
    } finally {
      counter.close();
      mine.cleanup();
    }
  });
});
