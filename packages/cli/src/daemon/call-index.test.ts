// The conversation index around a tool call, through the real API router over HTTP: a kernel with
// sessions, the dispatcher and one test tool; the index is the real one, its write held or failed
// at the moment the test chooses (the real write runs when released).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, DurableStore, definePlugin, defineTool, type Kernel, sessionsPlugin, tools, toolsPlugin } from '@aalis/core';
import { AuditLog } from '@aalis/plugin-approval';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AdapterTokens } from './adapter-tokens.js';
import { OWNER_CLIENT } from './api-client.js';
import { handleApi } from './api.js';
import { CallTracker } from './calls.js';
import { EventLoopWatch } from './event-loop.js';
import { EventHub } from './events.js';
import { sendError } from './http.js';
import { ownerTurn } from './serve-process.testing.js';
import { SessionIndex } from './session-index.js';

interface Scene {
  readonly url: string;
  readonly index: SessionIndex;
  readonly dir: string;
  /** Set by the test: what the tool does when it runs. */
  onTool: () => void;
  /** How many times the tool ran. */
  runs: number;
  close(): Promise<void>;
}

const scenes: Scene[] = [];
afterEach(async () => {
  for (const scene of scenes.splice(0)) await scene.close();
});

async function scene(): Promise<Scene> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-call-index-'));
  const state = { onTool: () => {}, runs: 0 };
  const kernel: Kernel = createKernel({ dataDir: dir })
    .use(sessionsPlugin, { persist: false })
    .use(toolsPlugin)
    .use(
      definePlugin({
        name: 'test-tool',
        inject: [tools],
        apply(ctx) {
          ctx.get(tools).register(
            defineTool({
              name: 'mark',
              description: 'counts its runs',
              params: z.object({}).strict(),
              risk: 'low',
              handler: () => {
                state.runs++;
                state.onTool();
                return 'marked';
              },
            }),
          );
        },
      }),
    );
  await kernel.start();
  const index = await SessionIndex.open(join(dir, 'daemon'));
  const hub = new EventHub(kernel.events);
  const loop = new EventLoopWatch();
  const ctx = {
    kernel,
    audit: new AuditLog(await DurableStore.open(join(dir, 'approval'))),
    index,
    hub,
    calls: new CallTracker(),
    consoleIdentity: { platform: 'chat', userId: 'alice' },
    place: async () => {},
    status: () => ({}),
    loop,
    podCapability: () => {
      throw new Error('no pod here');
    },
    consoleAddress: () => ({ address: 'http://127.0.0.1:0/console#code=unused', expiresAt: 0 }),
    adapters: await AdapterTokens.open(await DurableStore.open(join(dir, 'daemon'))),
    hangUpAdapter: () => {},
  };
  const server: Server = createServer((req, res) => {
    handleApi(ctx, req, res, new URL(req.url ?? '/', 'http://daemon.invalid'), OWNER_CLIENT).catch((error: unknown) => sendError(res, error as never));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const made: Scene = Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    index,
    dir,
    async close() {
      hub.close();
      loop.stop();
      await new Promise<void>((r) => server.close(() => r()));
      await kernel.stop();
      await rm(dir, { recursive: true, force: true });
    },
  });
  scenes.push(made);
  return made;
}

async function call(s: Scene, session: string): Promise<{ status: number; body: { ok?: boolean; value?: unknown; error?: { code: string; message: string } }; timing: string | null }> {
  const res = await fetch(`${s.url}/api/tools/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool: 'mark', params: {}, turn: ownerTurn(session) }) });
  return { status: res.status, body: (await res.json()) as never, timing: res.headers.get('server-timing') };
}

/** Holds the index's next write until `release`; `written` resolves when the real write is on disk. */
function holdIndex(index: SessionIndex, fail?: Error) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let done!: () => void;
  const written = new Promise<void>((r) => (done = r));
  const state = { release, written, done: false };
  const real = index.seen.bind(index);
  index.seen = async (id, platform) => {
    index.seen = real; // one write only
    await gate;
    if (fail) throw fail;
    await real(id, platform);
    state.done = true;
    done();
  };
  return state;
}

const within = <T>(p: Promise<T>, what: string, ms = 20_000) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms).unref())]);

describe('the conversation index around a tool call', () => {
  it("writes a known conversation's line while the tool runs, and answers only once it is on disk", async () => {
    const s = await scene();
    expect((await call(s, 'chat-known')).body).toMatchObject({ ok: true, value: 'marked' });
    const before = s.index.list()[0]!.lastSeen;
    const held = holdIndex(s.index);
    let writtenWhenToolRan: boolean | undefined;
    const toolRan = new Promise<void>((r) => {
      s.onTool = () => {
        writtenWhenToolRan = held.done;
        r();
      };
    });
    let answered = false;
    const answer = call(s, 'chat-known').finally(() => (answered = true));
    // On the code before this change the tool waited for the line, which waits for the tool: it never ran.
    await within(toolRan, 'the tool running while the index line is held');
    expect(writtenWhenToolRan).toBe(false);
    expect(answered).toBe(false);
    held.release();
    const done = await within(answer, 'the answer');
    expect(done.body).toMatchObject({ ok: true, value: 'marked' });
    expect(held.done).toBe(true);
    const reopened = await SessionIndex.open(join(s.dir, 'daemon'));
    expect(reopened.list()[0]!.lastSeen > before).toBe(true);
  });

  it("writes a new conversation's line before its tool runs", async () => {
    const s = await scene();
    const held = holdIndex(s.index);
    let writtenWhenToolRan: boolean | undefined;
    s.onTool = () => (writtenWhenToolRan = held.done);
    const answer = call(s, 'chat-new');
    held.release();
    expect((await within(answer, 'the answer')).body).toMatchObject({ ok: true, value: 'marked' });
    expect(writtenWhenToolRan).toBe(true);
    expect((await SessionIndex.open(join(s.dir, 'daemon'))).has('chat-new')).toBe(true);
  });

  it("refuses a new conversation's call when its line cannot be written: nothing runs", async () => {
    const s = await scene();
    const held = holdIndex(s.index, new Error('disk full (test)'));
    const answer = call(s, 'chat-new');
    held.release();
    const done = await within(answer, 'the answer');
    expect(done.status).toBe(500);
    expect(done.body.error?.message).toContain('disk full (test)');
    expect(s.runs).toBe(0);
  });

  it("answers a known conversation's call with the tool's outcome when only its line failed, and warns", async () => {
    const s = await scene();
    await call(s, 'chat-known');
    // the index's warning, whatever other warnings the process emits meanwhile
    const warned = new Promise<string>((r) => {
      const listener = (w: Error) => {
        if (!w.message.includes('conversation index')) return;
        process.off('warning', listener);
        r(w.message);
      };
      process.on('warning', listener);
    });
    const held = holdIndex(s.index, new Error('disk full (test)'));
    s.onTool = () => held.release();
    const done = await within(call(s, 'chat-known'), 'the answer');
    expect(done.body).toMatchObject({ ok: true, value: 'marked' });
    expect(s.runs).toBe(2);
    expect(await within(warned, 'the warning')).toContain("could not note the use of 'chat-known'");
  });

  it('says in Server-Timing where the call went: index, tool, sandbox (no run here), total', async () => {
    const s = await scene();
    const { timing } = await call(s, 'chat-timing');
    const phases = Object.fromEntries([...(timing ?? '').matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
    expect(Object.keys(phases)).toEqual(['index', 'tool', 'sandbox', 'total']);
    expect(phases.sandbox).toBe(0);
    expect(timing).toContain('desc="0 run(s)"');
    expect(phases.tool! + phases.index!).toBeLessThanOrEqual(phases.total!);
  });
});
