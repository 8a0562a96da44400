import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reach } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type OriginTurn, sessionsPlugin } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { reachBindings } from './bindings.js';
import { ReachConfigSchema, reachPlugin } from './plugin.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-landings-')));
const home = join(root, 'home');
const ws = join(home, 'proj');
mkdirSync(ws, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: OriginTurn = { session: { id: 's1' }, platform: 'cli', speaker: { platform: 'cli', userId: 'owner' }, authorised: { platform: 'cli', userId: 'owner' }, inbound: { id: 'm' }, category: 'own' };

async function start(landings: unknown[]) {
  const kernel = createKernel({ dataDir: join(root, `data-${Math.random().toString(36).slice(2)}`) })
    .use(sessionsPlugin, { persist: false })
    .use(authorityPlugin, { owners: { cli: ['owner'] } })
    .use(reachPlugin, { install: root, form: 'source', userHome: home, loginShell: '/bin/sh', landings } as never);
  const status = await kernel.start();
  return { kernel, status };
}

describe("the reach plugin's extra landings", () => {
  it.each<[unknown, RegExp]>([
    [{ pattern: '(?=x)' }, /the pattern '\(\?=x\)' cannot be a landing: the group '\(\?=' .*lookarounds/],
    [{ pattern: '\\d+' }, /cannot be a landing: the escape \\d/],
    [{ path: '' }, /landings/],
    [{ path: '/x', tool: 'make' }, /landings/],
  ])('config %j is refused: %s', (landing, message) => {
    const parsed = ReachConfigSchema.safeParse({ install: root, form: 'source', landings: [landing] });
    expect(parsed.success).toBe(false);
    expect((parsed.error?.issues ?? []).map((i) => `${i.path.join(".")}: ${i.message}`).join("\n")).toMatch(message);
  });

  it('a pattern with an inner anchor fails the activation with a message that names it', async () => {
    const { status } = await start([{ pattern: '^/a$/b' }]);
    const failed = status.find((s) => s.name === 'reach');
    expect(failed).toMatchObject({ state: 'failed', cause: expect.stringMatching(/landings\[0\] is refused: the landing pattern '\^\/a\$\/b' has an anchor/) });
  });

  it('paths and patterns become landings: the boundary does not write them, the sandbox policy denies them', async () => {
    const { kernel, status } = await start([{ path: join(ws, 'deploy'), reason: 'run by cron' }, { pattern: '^.*/\\.taskrc$' }]);
    expect(status.every((s) => s.state === 'running')).toBe(true);
    kernel.get(reachBindings).bind('s1', { home: ws });
    const credential = await kernel.get(reach).forCall(turn);
    expect(credential.allows('write', join(ws, 'deploy', 'run.sh'))).toBe(false);
    expect(credential.allows('write', join(ws, 'lib', '.taskrc'))).toBe(false);
    expect(credential.allows('write', join(ws, 'lib', 'taskrc'))).toBe(true);
    expect(credential.sandboxPolicy().writeDeny).toContainEqual({ path: join(ws, 'deploy') });
    await kernel.stop();
  });
});
