// The sandbox backend is fixed for a daemon's life (the kernel never replaces a service), so the
// backend changes only across a restart: the daemon (`aalis serve`, a real process) is stopped
// with a background command running in the real Linux sandbox, which ends with it, and after the
// restart the agent asking for it is told why it is gone.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const dir = deploymentDir({ owners: { chat: ['alice'] } });
let daemon: ServeProcess | undefined;
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('background commands across a restart', () => {
  it('a stop kills them; after the restart their status says background commands end with the daemon', { timeout: 180_000 }, async () => {
    daemon = await startServe(dir);
    const started = await daemon.api('POST', '/api/tools/call', { tool: 'run_command_background', params: { command: 'echo started; exec sleep 56.25' }, turn: ownerTurn('chat-restart') });
    expect(started.body, daemon.stderr()).toMatchObject({ ok: true, value: { jobId: expect.any(String) } });
    const { jobId } = started.body.value;
    await until(() => processesWith('sleep 56.25').length > 0, 'the background command to start');
    expect(await daemon.stop()).toBe(0);
    daemon = undefined;
    await until(() => processesWith('sleep 56.25').length === 0, 'the background command to end with the daemon');

    daemon = await startServe(dir);
    const status = await daemon.api('POST', '/api/tools/call', { tool: 'command_status', params: { jobId }, turn: ownerTurn('chat-restart') });
    expect(status.body).toMatchObject({ ok: false, message: expect.stringMatching(/end when the daemon stops.*sandbox backend changes.*start it again/) });
  });
});

/** Processes whose command line is exactly `command` (the shell's own line contains it too, among more). */
function processesWith(command: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() === command) found.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
