// A client that hangs up while its tool call runs, against a real `aalis serve`: the command is
// killed (sandboxed and on the host), the conversation's line in the index (written while the
// tool runs, h35) still lands, and the next call of that conversation sees one consistent entry.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

let dir: string;
let daemon: ServeProcess;
beforeAll(async () => {
  dir = deploymentDir({ owners: { chat: ['alice'] } });
  daemon = await startServe(dir);
}, 60_000);
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function processesWith(command: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() === command) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** Waits for `check`; 60 s only decides how long a failure takes (the sleeps run 240 s unless killed). */
async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The index's journal entries for one conversation, in order. */
function journalOf(id: string): { id: string; lastSeen: string }[] {
  const text = readFileSync(join(dir, 'data', 'daemon', 'sessions-journal.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => {
      const parsed = JSON.parse(line);
      return 'seen' in parsed ? parsed.seen : [parsed];
    })
    .filter((e: { id: string }) => e.id === id);
}

/** Starts a call and hangs up once `command` runs; resolves when the hang-up is done. */
async function hangUpWhile(session: string, command: string): Promise<void> {
  const controller = new AbortController();
  const call = fetch(`${daemon.url}/api/tools/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool: 'run_command', params: { command: `${command}; echo never` }, turn: ownerTurn(session) }),
    signal: controller.signal,
  }).catch((error: Error) => error);
  await until(() => processesWith(command).length > 0, `'${command}' to run`);
  controller.abort();
  expect(await call).toMatchObject({ name: 'AbortError' });
}

describe('a client that hangs up mid-call', () => {
  for (const [where, tier, command] of [
    ['sandboxed', 'workspace', 'sleep 241.5'],
    ['on the host', 'full', 'sleep 242.5'],
  ] as const) {
    it(`${where}: the command is killed, its use is in the index, and the next call of the conversation goes on`, { timeout: 180_000 }, async () => {
      const session = `chat-hang-${tier}`;
      expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn(session) })).status).toBe(200);
      expect((await daemon.api('POST', `/api/sessions/${session}/settings`, { tier })).status).toBe(200);
      const before = new Date().toISOString();
      await hangUpWhile(session, command);
      await until(() => processesWith(command).length === 0, `'${command}' to be killed after the hang-up`);
      // the hung-up call's line (a known conversation: written while the tool ran) is on disk
      await until(() => journalOf(session).some((e) => e.lastSeen >= before), 'the hung-up call to be noted in the index');

      const next = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo after' }, turn: ownerTurn(session) });
      expect(next.body).toMatchObject({ ok: true, value: { stdout: 'after\n' } });
      const listed = (await daemon.api('GET', '/api/sessions')).body.sessions.filter((s: { id: string }) => s.id === session);
      expect(listed).toHaveLength(1);
      expect(listed[0].lastSeen >= before).toBe(true);
      expect((await daemon.api('GET', '/api/status')).status).toBe(200);
    });
  }
});
