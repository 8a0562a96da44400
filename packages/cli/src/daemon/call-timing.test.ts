import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxRunRequest, SandboxRunResult, SandboxService } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallTiming, timedSandbox } from './call-timing.js';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';
import { SessionIndex } from './session-index.js';

let dir: string;
let daemon: ServeProcess;

/** A tool call with its answer's Server-Timing phases. */
async function timed(tool: string, params: unknown, session: string) {
  const res = await fetch(`${daemon.url}/api/tools/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, params, turn: ownerTurn(session) }),
  });
  const header = res.headers.get('server-timing') ?? '';
  const phases = Object.fromEntries([...header.matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1]!, Number(m[2])]));
  return { body: (await res.json()) as { ok: boolean }, header, phases };
}

describe("a tool call's Server-Timing through the daemon", () => {
  beforeAll(async () => {
    dir = deploymentDir({ owners: { chat: ['alice'] } });
    daemon = await startServe(dir);
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("times the call's sandbox run apart from the daemon's own work", async () => {
    const run = await timed('run_command', { command: 'true', network: 'off' }, 'chat-timing');
    expect(run.body).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0 } });
    expect(Object.keys(run.phases)).toEqual(['index', 'tool', 'sandbox', 'total']);
    expect(run.header).toContain('desc="1 run(s)"');
    expect(run.phases.sandbox).toBeGreaterThan(0);
    expect(run.phases.sandbox).toBeLessThanOrEqual(run.phases.tool!);
    expect(run.phases.tool!).toBeLessThanOrEqual(run.phases.total!);
    const list = await timed('list_dir', { path: '.' }, 'chat-timing');
    expect(list.body).toMatchObject({ ok: true });
    expect(list.header).toContain('desc="0 run(s)"');
    expect(list.phases.sandbox).toBe(0);
  }, 120_000);

  it("keeps a known conversation's last use, written while its tool ran, through a SIGKILL right after the answer", async () => {
    await timed('list_dir', { path: '.' }, 'chat-kill');
    const asked = new Date().toISOString();
    const second = await timed('list_dir', { path: '.' }, 'chat-kill');
    expect(second.body).toMatchObject({ ok: true });
    await daemon.stop('SIGKILL');
    const index = await SessionIndex.open(join(dir, 'data', 'daemon'));
    const entry = index.list().find((s) => s.id === 'chat-kill');
    expect(entry?.lastSeen).toBeDefined();
    expect(entry!.lastSeen >= asked).toBe(true);
  }, 60_000);
});

/** A service as a backend class makes one: private state its methods need as `this`. */
class PrivateService {
  readonly backend = 'linux' as const;
  readonly #runs: string[] = [];
  async probe() {
    return { available: true, checks: [] } as never;
  }
  async plan(): Promise<never> {
    throw new Error('not planned here');
  }
  async run(request: SandboxRunRequest): Promise<SandboxRunResult> {
    this.#runs.push(request.argv.join(' '));
    return { exitCode: 0 } as SandboxRunResult;
  }
  async discardKept(id: string): Promise<void> {
    this.#runs.push(`discard ${id}`);
  }
  get runs(): readonly string[] {
    return this.#runs;
  }
}

describe('timedSandbox', () => {
  const request = { argv: ['true'] } as unknown as SandboxRunRequest;

  it("times runs inside a call's dispatch only, and passes every other member to the service itself", async () => {
    const inner = new PrivateService();
    const timed = timedSandbox(inner as unknown as SandboxService);
    const timing = new CallTiming();
    await timing.tool(() => timed.run(request));
    await timed.run(request); // outside any call: not counted
    await timed.discardKept?.('k1'); // a method that needs the service's private state as `this`
    expect(inner.runs).toEqual(['true', 'true', 'discard k1']);
    expect(timed.backend).toBe('linux');
    expect(timing.header()).toContain('desc="1 run(s)"');
  });

  it('leaves a service whose run is frozen as it is (a proxy must answer a frozen member as itself)', async () => {
    const frozen: SandboxService = Object.freeze({ backend: 'linux', probe: async () => ({}) as never, plan: async () => ({}) as never, run: async () => ({ exitCode: 0 }) as SandboxRunResult });
    expect(timedSandbox(frozen)).toBe(frozen);
    await expect(frozen.run(request)).resolves.toMatchObject({ exitCode: 0 });
  });
});
