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
});
