// The pod's host-side list_dir and copy_into_sandbox against a host that changes under them: a
// real process swaps a directory the task may read with a symlink to a deny-read folder
// (renameat2 RENAME_EXCHANGE, in a loop) while the tools run, and procfs is bound into a readable
// folder (as root). Nothing the deny-read folder holds may be listed or copied (found by an
// attack: the walks by path listed its names, a bound /proc listed the daemon's descriptors).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy, SandboxService } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, type AgentToolContext, type AgentToolOutcome } from './agent-tools.js';

const CANARY = 'CANARY-SECRET-NAME';
let root: string;
let ctx: AgentToolContext;

// Swaps two names for each other as fast as it can (RENAME_EXCHANGE = 2).
const SWAP_PY = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
`;

/** Starts the swapper and waits until it has swapped once (so no round runs before it does). */
async function swapping(a: string, b: string): Promise<ChildProcess> {
  const child = spawn('python3', ['-c', SWAP_PY, a, b], { stdio: 'ignore' });
  const linkAtFirst = lstatSync(a).isSymbolicLink();
  for (let i = 0; i < 500 && lstatSync(a, { throwIfNoEntry: false })?.isSymbolicLink() === linkAtFirst; i++) await new Promise((r) => setTimeout(r, 10));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const ended = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await ended;
}

function call(name: 'list_dir' | 'copy_into_sandbox', params: unknown): Promise<AgentToolOutcome> {
  return AGENT_TOOLS[name].run(ctx, params);
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-pod-tools-')));
  const deny = join(root, 'deny');
  mkdirSync(join(deny, CANARY), { recursive: true });
  writeFileSync(join(deny, CANARY, 'secret.txt'), 'secret\n');
  const ws = join(root, 'ws');
  mkdirSync(join(ws, 'd', 'inner'), { recursive: true });
  writeFileSync(join(ws, 'd', 'inner', 'plain.txt'), 'plain\n');
  symlinkSync(deny, join(ws, 'l'));
  const base = join(root, 'task');
  for (const d of ['work', 'scratch', 'meta']) mkdirSync(join(base, d), { recursive: true });
  const policy: SandboxPolicy = {
    readDeny: [{ path: deny }],
    readAllowWithin: [],
    write: [join(base, 'work')],
    writeDeny: [],
    writeExceptions: [],
    controlDeny: [],
    network: 'off',
    localPorts: [],
    unixSockets: [],
  };
  // the sandbox is never reached by these two tools: a stand-in that fails if it were
  const sandbox = { run: () => Promise.reject(new Error('no command runs in this test')) } as unknown as SandboxService;
  ctx = { dirs: { base, work: join(base, 'work'), scratch: join(base, 'scratch'), meta: join(base, 'meta') }, policy, env: {}, sandbox, commandTimeoutMs: 1000, signal: new AbortController().signal };
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('the pod\'s host-side walks while the host changes', () => {
  it('list_dir never lists the deny-read folder a symlink swapped in mid-call points to', async () => {
    const ws = join(root, 'ws');
    const swapper = await swapping(join(ws, 'd'), join(ws, 'l'));
    const seen: string[] = [];
    let listed = 0;
    try {
      for (let i = 0; i < 2000; i++) {
        const out = await call('list_dir', { path: join(ws, 'd') });
        if (out.ok) {
          listed++;
          seen.push(JSON.stringify(out.value));
        } else expect(out.rule, out.message).toMatch(/^(deny-read|final-symlink|opened-elsewhere|parent-elsewhere|missing|not-a-directory)$/);
      }
    } finally {
      await stop(swapper);
    }
    expect(seen.filter((s) => s.includes(CANARY))).toEqual([]);
    // the check is not vacuous: the real directory was listed while the swaps went on
    expect(listed).toBeGreaterThan(0);
  }, 60_000);

  it('copy_into_sandbox never copies a name from the deny-read folder swapped in mid-walk', async () => {
    const ws = join(root, 'ws');
    const swapper = await swapping(join(ws, 'd'), join(ws, 'l'));
    let copied = 0;
    try {
      for (let i = 0; i < 150; i++) {
        const out = await call('copy_into_sandbox', { from: ws, to: `copy-${i}` });
        if (out.ok) copied++;
        else expect(out.rule, out.message).toMatch(/^(deny-read|final-symlink|opened-elsewhere|parent-elsewhere|missing|not-a-directory)$/);
      }
    } finally {
      await stop(swapper);
    }
    const found = execFileSync('find', [ctx.dirs.work], { encoding: 'utf8' });
    expect(found).not.toContain(CANARY);
    expect(found).not.toContain('secret.txt');
    expect(copied).toBeGreaterThan(0);
    expect(found).toContain('plain.txt');
  }, 120_000);

  it('as root: procfs bound into a readable folder is neither listed nor copied (kernel-file-system)', async () => {
    if (process.getuid?.() !== 0) return; // mounting needs root; CI runs as root
    const at = join(root, 'ws-proc', 'bound');
    mkdirSync(at, { recursive: true });
    execFileSync('mount', ['--bind', `/proc/${process.pid}`, at]);
    try {
      const listed = await call('list_dir', { path: join(at, 'fd') });
      expect(listed).toMatchObject({ ok: false, refused: true, rule: 'kernel-file-system' });
      const copied = await call('copy_into_sandbox', { from: join(root, 'ws-proc'), to: 'proc-copy' });
      expect(copied).toMatchObject({ ok: false, refused: true, rule: 'kernel-file-system' });
      expect(existsSync(join(ctx.dirs.work, 'proc-copy', 'bound', 'environ'))).toBe(false);
      // a file, not a directory: a refusal that names its rule, not the system's text
      expect(await call('list_dir', { path: join(at, 'status') })).toMatchObject({ ok: false, rule: 'not-a-directory' });
    } finally {
      execFileSync('umount', [at]);
    }
    expect(readdirSync(join(root, 'ws-proc', 'bound'))).toEqual([]);
  });
});
