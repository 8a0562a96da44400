// A turn names its conversation and that conversation's root; the daemon judges per root (the
// settings a credential reads, the session temp). Found by an attack: a call naming a stricter
// conversation's root as its own replaced the settings that conversation's running command was
// judged by, and the command's write landed. The root is the one the kernel holds now.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

let dir: string;
let daemon: ServeProcess;

describe("a turn that names another conversation's root", () => {
  beforeAll(async () => {
    dir = deploymentDir({ owners: { chat: ['alice'] } });
    daemon = await startServe(dir);
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is refused (409 root-mismatch) before anything runs, and cannot change what the root's running command is judged by", async () => {
    const workspace = join(dir, 'data', 'workspace');
    mkdirSync(workspace, { recursive: true });
    const call = (turn: unknown, params: unknown) => daemon.api('POST', '/api/tools/call', { tool: 'run_command', params, turn });
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('strict') })).status).toBe(200);
    expect((await daemon.api('POST', '/api/sessions/strict/settings', { tier: 'readonly', boundary: 'deny' })).status).toBe(200);
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('loose') })).status).toBe(200);
    // the strict conversation's command waits, then writes in the workspace (readonly: refused)
    const running = call(ownerTurn('strict'), { command: 'sleep 3; echo x > strict-wrote.txt', network: 'off' });
    await new Promise((r) => setTimeout(r, 1000));
    const claimed = await call({ ...ownerTurn('loose'), session: { id: 'loose', rootId: 'strict' } }, { command: 'true', network: 'off' });
    expect(claimed.status).toBe(409);
    expect(claimed.body).toMatchObject({ error: { code: 'root-mismatch', message: expect.stringContaining("belongs to 'loose'") } });
    const strict = await running;
    expect(strict.status).toBe(200);
    expect(existsSync(join(workspace, 'strict-wrote.txt'))).toBe(false);
    expect((await daemon.api('GET', '/api/sessions/strict/settings')).body).toMatchObject({ settings: { tier: 'readonly' } });
    const turn = await daemon.api('POST', '/api/turns', { turn: { ...ownerTurn('loose'), session: { id: 'loose', rootId: 'strict' } } });
    expect(turn.body).toMatchObject({ error: { code: 'root-mismatch' } });
  }, 120_000);

  it('a child of a child is refused before anything is made (409), and runs nothing at the child\'s old settings', async () => {
    const workspace = join(dir, 'data', 'workspace');
    mkdirSync(workspace, { recursive: true });
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('gc-A') })).status).toBe(200);
    expect((await daemon.api('POST', '/api/turns', { turn: { ...ownerTurn('gc-B'), session: { id: 'gc-B', rootId: 'gc-A' } } })).status).toBe(200);
    expect((await daemon.api('POST', '/api/sessions/gc-A/settings', { tier: 'readonly', boundary: 'deny' })).status).toBe(200);
    // found by an attack: C rooted at B wrote at the tier B was made with, not A's readonly
    const target = join(workspace, 'via-grandchild.txt');
    const inC = await daemon.api('POST', '/api/tools/call', { tool: 'write_file', params: { path: target, content: 'c' }, turn: { ...ownerTurn('gc-C'), session: { id: 'gc-C', rootId: 'gc-B' } } });
    expect(inC.status).toBe(409);
    expect(inC.body).toMatchObject({ error: { code: 'root-mismatch', message: expect.stringContaining("'gc-B' is not a root conversation: it belongs to 'gc-A'") } });
    expect(existsSync(target)).toBe(false);
    // nothing was made or noted for it: neither C, nor B as a root of its own
    const ids = (await daemon.api('GET', '/api/sessions')).body.sessions.map((s: { id: string }) => s.id);
    expect(ids).not.toContain('gc-C');
    expect(ids).not.toContain('gc-B');
    expect((await daemon.api('GET', '/api/sessions/gc-C/settings')).status).toBe(404);
  }, 60_000);

  it('a child named without its root is its root\'s everywhere: its host job ends when the root leaves the host', async () => {
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('bj-A') })).status).toBe(200);
    expect((await daemon.api('POST', '/api/turns', { turn: { ...ownerTurn('bj-B'), session: { id: 'bj-B', rootId: 'bj-A' } } })).status).toBe(200);
    expect((await daemon.api('POST', '/api/sessions/bj-A/settings', { tier: 'full' })).status).toBe(200);
    // the child named by its id alone: the daemon takes the kernel's root for it (found by an attack:
    // the job was kept under the id the turn named, and outlived the root's move to the sandbox)
    const job = await daemon.api('POST', '/api/tools/call', { tool: 'run_command_background', params: { command: 'sleep 30' }, turn: ownerTurn('bj-B') });
    expect(job.status).toBe(200);
    const jobId = job.body.value.jobId;
    expect((await daemon.api('POST', '/api/sessions/bj-A/settings', { tier: 'workspace' })).status).toBe(200);
    let state = '';
    for (let i = 0; i < 50 && state !== 'done'; i++) {
      const status = await daemon.api('POST', '/api/tools/call', { tool: 'command_status', params: { jobId }, turn: ownerTurn('bj-B') });
      state = status.body.value?.state ?? JSON.stringify(status.body);
      if (state !== 'done') await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe('done');
    // the turn's answer names the root it was taken into
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('bj-B') })).body).toMatchObject({ session: 'bj-A' });
  }, 60_000);
});
