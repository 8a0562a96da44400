// The rules that protect the person hold for a third-party plugin's tool, not only for the
// built-ins: a plugin registers its own tools, gets the call's credential as they do, and the
// credential itself refuses `.env`/`.pem`/`.key` writes in the sandboxed tiers and puts them in the
// sandbox policy's control-deny layer. A real kernel, a real bubblewrap sandbox; nothing mocked.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxService, sandbox } from '@aalis/api-reach';
import { defineTool, definePlugin, type OriginTurn, sessions, ToolError, tools, writeFileAtomic } from '@aalis/core';
import { reachBindings } from '@aalis/plugin-reach';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { credentialOf, requireOrThrow } from './credential.js';
import { installOf, toolsKernelOf } from './tools-kernel.testing.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-plugin-tool-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A plugin's tool as an author writes it: judge the write through the credential, then write through the safe file layer. */
const saveNote = defineTool({
  name: 'save_note',
  description: 'Save a note to a file in the main directory.',
  params: z.object({ path: z.string().min(1), text: z.string() }).strict(),
  risk: 'medium',
  async handler(ctx, params) {
    const credential = credentialOf(ctx);
    const path = join(credential.home!, params.path);
    await requireOrThrow(credential, { effect: 'write', path });
    await writeFileAtomic(path, params.text, { createParents: true });
    return { path };
  },
});

/** A plugin's own sandboxed command, run with the policy its credential gives. */
function shellNote(service: () => SandboxService | undefined) {
  return defineTool({
    name: 'shell_note',
    description: 'Write a file with a shell command in the sandbox.',
    params: z.object({ path: z.string().min(1) }).strict(),
    risk: 'medium',
    async handler(ctx, params) {
      const credential = credentialOf(ctx);
      const sandboxService = service();
      if (!sandboxService) throw new ToolError('unavailable', 'no sandbox');
      const argv: [string, ...string[]] = ['sh', '-c', `echo secret > ${params.path}`];
      const result = await sandboxService.run({ argv, cwd: credential.home!, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, policy: credential.sandboxPolicy() });
      return { exitCode: result.exitCode, stderr: result.stderr, deniedWrites: result.deniedWrites };
    },
  });
}

const notesPlugin = definePlugin({
  name: 'notes',
  inject: [tools],
  optional: [sandbox],
  apply(ctx) {
    ctx.onDispose(ctx.get(tools).register(saveNote));
    ctx.onDispose(ctx.get(tools).register(shellNote(() => ctx.maybe(sandbox))));
  },
});

async function startWith(name: string) {
  const base = join(root, name);
  const home = join(base, 'home');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  const owner = { platform: 'chat', userId: 'owner' };
  const kernel = toolsKernelOf({ dataDir: join(base, 'data'), home, install: installOf(base), approvalTimeoutMs: 1500, linuxSandbox: true, onAsk: (e, desk) => void desk.reply({ code: e.code, decision: 'reject', by: owner }) }).use(notesPlugin);
  const status = await kernel.start();
  expect(status.filter((s) => s.state !== 'running')).toEqual([]);
  kernel.get(reachBindings).bind('main', { home: project });
  await kernel.get(sessions).change('main', { tier: 'workspace', boundary: 'ask' });
  let n = 0;
  const turn = (): OriginTurn => ({ session: { id: 'main' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: `m${++n}` }, category: 'own' });
  return { kernel, project, call: (tool: string, params: unknown) => kernel.get(tools).dispatch({ tool, params, turn: turn() }) };
}

describe("a plugin's tool meets the never-written rule through its credential", () => {
  it.each(['.env', '.env.local', 'server.pem', 'id.key', 'sub/.env'])('save_note refuses %s in the workspace tier and writes nothing', async (file) => {
    const k = await startWith(`save-${file.replace(/\W/g, '_')}`);
    try {
      const out = await k.call('save_note', { path: file, text: 'SECRET=1' });
      expect(out).toMatchObject({ ok: false, kind: 'denied' });
      expect(JSON.stringify(out)).toContain('rule: secret-file');
      expect(existsSync(join(k.project, file))).toBe(false);
      // an ordinary file in the same place is written: the rule is the refusal, not a broken tool
      const ok = await k.call('save_note', { path: 'notes.txt', text: 'hello' });
      expect(ok).toMatchObject({ ok: true });
      expect(readFileSync(join(k.project, 'notes.txt'), 'utf8')).toBe('hello');
    } finally {
      await k.kernel.stop();
    }
  });

  // Refused at once under the look model (a read-only placeholder), or written into the overlay's
  // upper layer and refused at the commit (overlay-mount.ts): either way named as refused, never on the host.
  it("a plugin's own sandboxed command cannot write .env: the sandbox refuses it and says so", async () => {
    const k = await startWith('shell');
    try {
      const out = await k.call('shell_note', { path: '.env' });
      expect(out).toMatchObject({ ok: true });
      expect((out as { value: { deniedWrites: string[] } }).value.deniedWrites).toContain(join(k.project, '.env'));
      expect(existsSync(join(k.project, '.env'))).toBe(false);
      const plain = await k.call('shell_note', { path: 'plain.txt' });
      expect((plain as { value: { exitCode: number } }).value.exitCode).toBe(0);
      expect(readFileSync(join(k.project, 'plain.txt'), 'utf8')).toBe('secret\n');
    } finally {
      await k.kernel.stop();
    }
  });
});
