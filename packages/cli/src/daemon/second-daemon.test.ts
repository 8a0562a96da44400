// A second `aalis serve` on a data directory a running daemon holds. Both used to start: the
// second replaced the first's token file and registry entry, and the first's stop killed the
// second's running command (it kills every sandbox named under the data directory). Now the
// second is refused, with whom to stop; a killed daemon's lock does not block the next start.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, serveOnce, startServe } from './serve-process.testing.js';

const dir = deploymentDir({ owners: { chat: ['alice'] } });
const otherDir = deploymentDir({ owners: { chat: ['alice'] } });
const daemons: ServeProcess[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(otherDir, { recursive: true, force: true });
});

describe('a second daemon on the same data directory', () => {
  it('is refused while the first runs, naming it; the first keeps its token and its commands', { timeout: 180_000 }, async () => {
    const first = await startServe(dir);
    daemons.push(first);
    const running = first.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'sleep 2.75; echo survived' }, turn: ownerTurn('chat-first') });

    const second = await serveOnce(['--dir', dir, '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`another aalis daemon \\(pid ${first.child.pid}, started .*\\) is running on the data directory ${dir}/data`));
    expect(second.stderr).toMatch(/fix: .*--data DIR/);
    expect(second.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(second.stdout).not.toMatch(/console:/);

    expect(readFileSync(join(dir, 'data', 'daemon', 'token'), 'utf8').trim()).toBe(first.token);
    const answer = await running;
    expect(answer.body).toMatchObject({ ok: true, value: { exitCode: 0, stdout: 'survived\n' } });
  });

  it('after the first is killed (SIGKILL, its lock left behind), the next daemon starts', { timeout: 180_000 }, async () => {
    const first = daemons[0] as ServeProcess;
    await first.stop('SIGKILL');
    expect(JSON.parse(readFileSync(join(dir, 'data', 'daemon.lock'), 'utf8'))).toMatchObject({ pid: first.child.pid });
    const next = await startServe(dir);
    daemons.push(next);
    expect(JSON.parse(readFileSync(join(dir, 'data', 'daemon.lock'), 'utf8'))).toMatchObject({ pid: next.child.pid });
    expect((await next.api('GET', '/api/status')).status).toBe(200);
    expect(await next.stop(), next.stderr()).toBe(0);
    expect(() => readFileSync(join(dir, 'data', 'daemon.lock'))).toThrow(/ENOENT/);
  });

  it('three started at once over a killed one\'s lock: exactly one runs, the others exit 1 naming it', { timeout: 180_000 }, async () => {
    // the lock is the kernel's now (data-dir-lock.ts): whoever holds it runs, whatever the order
    const killed = await startServe(dir);
    await killed.stop('SIGKILL');
    const starts = [0, 1, 2].map(() => startServe(dir).then((d) => ({ ok: true as const, d }), (e: Error) => ({ ok: false as const, e })));
    const results = await Promise.all(starts);
    const up = results.flatMap((r) => (r.ok ? [r.d] : []));
    daemons.push(...up);
    expect(up).toHaveLength(1);
    for (const r of results) if (!r.ok) expect(r.e.message).toMatch(new RegExp(`another aalis daemon \\(pid ${up[0]!.child.pid}, started|another aalis daemon is starting`));
    expect(JSON.parse(readFileSync(join(dir, 'data', 'daemon.lock'), 'utf8'))).toMatchObject({ pid: up[0]!.child.pid });
    expect(await up[0]!.stop(), up[0]!.stderr()).toBe(0);
  });

  it("a daemon on another data directory: the first's stop leaves the second's running command alone", { timeout: 180_000 }, async () => {
    const first = await startServe(dir);
    daemons.push(first);
    const second = await startServe(otherDir);
    daemons.push(second);
    const marker = `sleep 15.${process.pid}`;
    const running = second.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `${marker}; echo survived` }, turn: ownerTurn('chat-second') });
    await until(() => processesWith(marker).length > 0, 'the second daemon\'s command to run');
    expect(await first.stop(), first.stderr()).toBe(0);
    expect((await running).body).toMatchObject({ ok: true, value: { exitCode: 0, stdout: 'survived\n' } });
  });
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

/** Waits for `check`; 60 s only decides how long a failure takes. */
async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
