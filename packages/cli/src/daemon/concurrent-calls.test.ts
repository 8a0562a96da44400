import { readFileSync, rmSync } from 'node:fs';
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

describe('concurrent tool calls through the daemon', () => {
  // The host walks of the calls share one ordered thread and their layers' removal another
  // (sandbox-linux host-lane.ts): eight runs at once in one workspace each commit what they wrote,
  // none lost and none mixed with another's, and each answer is its own.
  it('eight run_command calls at once in one workspace: every answer its own, every write committed', async () => {
    const calls = Array.from({ length: 8 }, (_, i) =>
      daemon.api('POST', '/api/tools/call', {
        tool: 'run_command',
        params: { command: `echo run-${i} > concurrent-${i}.txt && cat concurrent-${i}.txt && pwd`, network: 'off' },
        turn: ownerTurn(`chat-concurrent-${i % 3}`),
      }),
    );
    const answers = await Promise.all(calls);
    const cwds = new Set<string>();
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      expect(answer.body, JSON.stringify(answer.body).slice(0, 2000)).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0 } });
      const [line, cwd] = String(answer.body.value.stdout).trim().split('\n');
      expect(line).toBe(`run-${i}`);
      cwds.add(cwd!);
    });
    expect(cwds.size).toBe(1); // one workspace for all eight
    const cwd = [...cwds][0]!;
    for (let i = 0; i < 8; i++) expect(readFileSync(join(cwd, `concurrent-${i}.txt`), 'utf8')).toBe(`run-${i}\n`);
  }, 180_000);
});
