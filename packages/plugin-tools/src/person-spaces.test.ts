// The docker deployment's person spaces seen through the host-side file tools: a real kernel
// (sessions, authority, the approval plugin, reach, the dispatcher, the tools) with two owners,
// each bound to their own space as the daemon's docker placer binds them. Nothing is mocked and no
// container runs: these tools work in the daemon's own process, where only reach keeps people apart.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { type Identity, type OriginTurn, sessions, type ToolOutcome, tools } from '@aalis/core';
import type { ApprovalRequestedEvent } from '@aalis/plugin-approval';
import { reachBindings, sessionTmpOf } from '@aalis/plugin-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolsKernelOf } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-spaces-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const dataDir = join(root, 'data');
const users = join(dataDir, 'workspace', 'users');
const alice: Identity = { platform: 'chat', userId: 'alice' };
const carol: Identity = { platform: 'chat', userId: 'carol' };
const spaceOf = (who: Identity) => join(users, `${who.platform}-${who.userId}`);
for (const who of [alice, carol]) for (const dir of ['workspace', 'tmp']) mkdirSync(join(spaceOf(who), dir), { recursive: true });
mkdirSync(join(root, 'home'), { recursive: true });
writeFileSync(join(spaceOf(alice), 'workspace', 'secret-notes.txt'), 'alice only\n');
writeFileSync(join(spaceOf(carol), 'workspace', 'notes.txt'), 'carol\n');

let n = 0;
const turn = (who: Identity): OriginTurn => ({ session: { id: 'main' }, platform: 'chat', speaker: who, authorised: who, inbound: { id: `m${++n}` }, category: 'own' });
const asked: ApprovalRequestedEvent[] = [];
let call: (who: Identity, tool: string, params: unknown) => Promise<ToolOutcome>;

beforeAll(async () => {
  const kernel = toolsKernelOf({
    dataDir,
    home: join(root, 'home'),
    install: join(root, 'install'),
    approvalTimeoutMs: 1500,
    owners: { chat: ['alice', 'carol'] },
    personSpaces: users,
    // Every ask is approved: an ask that could release another person's file would show here.
    onAsk: (event, desk) => {
      asked.push(event);
      void desk.reply({ code: event.code, decision: 'approve', by: carol });
    },
  });
  const status = await kernel.start();
  expect(status.filter((s) => s.state !== 'running')).toEqual([]);
  const bindings = kernel.get(reachBindings);
  for (const who of [alice, carol]) {
    const space = spaceOf(who);
    bindings.bind('main', { home: join(space, 'workspace'), tmp: join(space, 'tmp'), person: `${who.platform}:${who.userId}`, space });
  }
  // full: the refusal must hold whatever the tier
  await kernel.get(sessions).change('main', { tier: 'full', boundary: 'ask' });
  call = (who, tool, params) => kernel.get(tools).dispatch({ tool, params, turn: turn(who) });
});

describe('person spaces of the docker deployment, through the host-side file tools', () => {
  it("a person's own space works", async () => {
    expect(await call(carol, 'read_file', { path: 'notes.txt' })).toMatchObject({ ok: true });
    expect(await call(carol, 'list_dir', { path: '.' })).toMatchObject({ ok: true });
    expect(await call(carol, 'write_file', { path: 'mine.txt', content: 'x' })).toMatchObject({ ok: true });
    expect(readFileSync(join(spaceOf(carol), 'workspace', 'mine.txt'), 'utf8')).toBe('x');
  });

  it("another person's space is refused to read, list and write, in full, without an ask", async () => {
    const theirs = join(spaceOf(alice), 'workspace');
    const refusals = [
      await call(carol, 'list_dir', { path: users }),
      await call(carol, 'list_dir', { path: theirs }),
      await call(carol, 'read_file', { path: join(theirs, 'secret-notes.txt') }),
      await call(carol, 'write_file', { path: join(theirs, 'planted.txt'), content: 'x' }),
      await call(carol, 'write_file', { path: join(users, 'new-person', 'x.txt'), content: 'x' }),
    ];
    for (const outcome of refusals) {
      expect(outcome).toMatchObject({ ok: false, message: expect.stringContaining("the docker deployment's person spaces") });
    }
    expect(existsSync(join(theirs, 'planted.txt'))).toBe(false);
    expect(existsSync(join(users, 'new-person'))).toBe(false);
    expect(asked).toEqual([]);
  });

  it("another person's session temp is refused; one's own is readable", async () => {
    expect(await call(alice, 'read_file', { path: 'secret-notes.txt' })).toMatchObject({ ok: true }); // makes Alice's session temp
    const aliceTmp = sessionTmpOf(join(spaceOf(alice), 'tmp'), 'main');
    writeFileSync(join(aliceTmp, 'scratch.txt'), 'alice temp\n');
    expect(await call(alice, 'read_file', { path: join(aliceTmp, 'scratch.txt') })).toMatchObject({ ok: true });
    expect(await call(carol, 'read_file', { path: join(aliceTmp, 'scratch.txt') })).toMatchObject({ ok: false, message: expect.stringContaining('rule: deny-read') });
    expect(await call(carol, 'list_dir', { path: aliceTmp })).toMatchObject({ ok: false });
    expect(asked).toEqual([]);
  });
});
