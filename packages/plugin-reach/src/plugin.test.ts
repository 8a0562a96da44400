import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isReachCredential, parseRunRequest, reach, type ReachCredential } from '@aalis/api-reach';
import {
  type ApprovalOutcome,
  type ApprovalRequest,
  approval,
  authorityPlugin,
  createKernel,
  definePlugin,
  type OriginTurn,
  sessions,
  sessionsPlugin,
} from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { reachBindings } from './bindings.js';
import { reachPlugin } from './plugin.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-reach-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const home = join(root, 'home');
const project = join(home, 'project');
const outside = join(root, 'elsewhere');
mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
mkdirSync(join(home, '.ssh'), { recursive: true });
mkdirSync(outside, { recursive: true });

const owner = { platform: 'cli', userId: 'owner' };
const stranger = { platform: 'cli', userId: 'stranger' };
const turnOf = (who: typeof owner, session = 's1'): OriginTurn => ({
  session: { id: session },
  platform: 'cli',
  speaker: who,
  authorised: who,
  inbound: { id: 'm' },
  category: 'own',
});

/**
 * The approval service is a scripted stand-in here (the real one is plugin-approval, exercised
 * end to end in the tools package): it records each ask and answers from a queue.
 */
async function start(answers: ApprovalOutcome[] = [], extra: Record<string, unknown> = {}) {
  const asked: ApprovalRequest[] = [];
  process.env.AALIS_TEST_SECRET = 'must-not-leak';
  process.env.SSH_AUTH_SOCK = join(root, 'agent.sock');
  const kernel = createKernel({ dataDir: join(root, `data-${Math.random().toString(36).slice(2)}`) })
    .use(sessionsPlugin, { persist: false })
    .use(authorityPlugin, { owners: { cli: ['owner', 'second-owner'] } })
    .use(
      definePlugin({
        name: 'scripted-approval',
        provides: [approval],
        apply: (ctx) =>
          ctx.provide(approval, {
            async ask(request) {
              asked.push(request);
              return answers.shift() ?? { outcome: 'expired', afterMs: 1 };
            },
          }),
      }),
    )
    .use(reachPlugin, { install: root, form: 'source', userHome: home, loginShell: '/bin/sh', ...extra });
  const status = await kernel.start();
  expect(status.every((s) => s.state === 'running')).toBe(true);
  kernel.get(reachBindings).bind('s1', { home: project });
  return { kernel, asked, reach: kernel.get(reach), sessions: kernel.get(sessions) };
}

const yes: ApprovalOutcome = { outcome: 'approved', by: owner, remembered: false };

describe('reach plugin', () => {
  it("issues a branded credential whose brand a copy does not carry", async () => {
    const { reach } = await start();
    const credential = await reach.forCall(turnOf(owner));
    expect(isReachCredential(credential)).toBe(true);
    expect(Object.keys(credential)).not.toContain(String(Symbol.for('@aalis/api-reach/credential')));
    expect(isReachCredential({ ...credential })).toBe(false);
    expect(isReachCredential(Object.assign({}, credential))).toBe(false);
    expect(credential.exec).toBe('sandbox');
    expect(credential.home).toBe(project);
  });

  it('allows writes in the workspace, asks outside it, and remembers the one-shot approval for this call only', async () => {
    const { reach, asked } = await start([yes]);
    const credential = await reach.forCall(turnOf(owner));
    expect(await credential.require({ effect: 'write', path: join(project, 'a.txt') })).toEqual({ allowed: true });
    const target = join(outside, 'b.txt');
    expect(credential.allows('write', target)).toBe(false);
    expect(await credential.require({ effect: 'write', path: target })).toEqual({ allowed: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.subject).toEqual({ kind: 'write-path', path: target, rule: 'boundary' });
    expect(credential.allows('write', target)).toBe(true);
    expect(credential.sandboxPolicy().write).toContain(target);
    // Asking again in the same call does not ask twice.
    expect(await credential.require({ effect: 'write', path: target })).toEqual({ allowed: true });
    expect(asked).toHaveLength(1);
    // The next call starts with no grants.
    const next = await reach.forCall(turnOf(owner));
    expect(next.allows('write', target)).toBe(false);
    expect(next.sandboxPolicy().write).not.toContain(target);
  });

  it('applies a downgrade at once to a credential already issued', async () => {
    const { reach, sessions } = await start();
    const credential = await reach.forCall(turnOf(owner));
    const file = join(project, 'c.txt');
    expect(credential.allows('write', file)).toBe(true);
    await sessions.change('s1', { tier: 'readonly', boundary: 'deny' });
    expect(credential.allows('write', file)).toBe(false);
    const verdict = await credential.require({ effect: 'write', path: file });
    expect(verdict.allowed).toBe(false);
    expect(!verdict.allowed && verdict.message).toMatch(/rule: boundary-policy.*boundary policy of this conversation is 'deny' \(tier readonly\).*Write inside the workspace/);
    expect(credential.sandboxPolicy().write).not.toContain(project);
  });

  it('never asks for the control plane or the deny-read list, and says it cannot be requested', async () => {
    const { reach, asked, kernel } = await start([yes, yes]);
    const credential = await reach.forCall(turnOf(owner));
    const control = join(kernel.dataDir ?? '', 'config.yaml');
    const write = await credential.require({ effect: 'write', path: control });
    expect(write).toMatchObject({ allowed: false, message: expect.stringMatching(/rule: control-plane.*cannot be requested/) });
    const read = await credential.require({ effect: 'read', path: join(home, '.ssh', 'id_ed25519') });
    expect(read).toMatchObject({ allowed: false, message: expect.stringMatching(/rule: deny-read.*cannot be requested/) });
    expect(asked).toEqual([]);
    expect(credential.allows('read', join(project, '.env'))).toBe(false);
  });

  it('asks for a landing in the workspace and grants exactly that path', async () => {
    const { reach, asked } = await start([yes]);
    const credential = await reach.forCall(turnOf(owner));
    const hook = join(project, '.git', 'hooks', 'pre-commit');
    expect(await credential.require({ effect: 'write', path: hook })).toEqual({ allowed: true });
    expect(asked[0]?.subject).toMatchObject({ kind: 'write-path', rule: 'landing' });
    expect(credential.allows('write', hook)).toBe(true);
    expect(credential.allows('write', join(project, '.git', 'hooks', 'post-commit'))).toBe(false);
  });

  it('reports a rejected or expired ask with what was wanted and why', async () => {
    const { reach } = await start([{ outcome: 'rejected', by: 'reviewer', reason: 'outside the task' }]);
    const credential = await reach.forCall(turnOf(owner));
    const rejected = await credential.require({ effect: 'write', path: join(outside, 'x') });
    expect(rejected).toMatchObject({ allowed: false, message: expect.stringMatching(/needs approval because it is outside the roots.*rejected by the reviewer: outside the task/) });
    const expired = await credential.require({ effect: 'write', path: join(outside, 'y') });
    expect(expired).toMatchObject({ allowed: false, message: expect.stringMatching(/expired/) });
  });

  it("gives another person's call no local effect", async () => {
    const { reach, asked } = await start([yes]);
    const credential = await reach.forCall(turnOf(stranger));
    expect(credential.exec).toBe('none');
    expect(credential.home).toBeUndefined();
    expect(await credential.require({ effect: 'read', path: join(project, 'README') })).toMatchObject({ allowed: false, message: expect.stringMatching(/no-local-effect/) });
    expect(await credential.require({ effect: 'network', via: 'url' })).toEqual({ allowed: true });
    expect(credential.allows('read', join(project, 'README'))).toBe(false);
    await expect(credential.processEnv('sandbox')).rejects.toThrow(/no local effect/);
    expect(() => credential.sandboxPolicy()).toThrow(/nowhere/);
    expect(asked).toEqual([]);
  });

  it("builds the sandbox environment from the owner's login shell without AALIS_* or SSH_AUTH_SOCK, and the host's without AALIS_*", async () => {
    const { reach } = await start();
    const credential: ReachCredential = await reach.forCall(turnOf(owner));
    const unsandboxedEnv = await credential.processEnv('host');
    // the daemon's own (its token among them) reach no command, on the host neither
    expect(unsandboxedEnv.AALIS_TEST_SECRET).toBeUndefined();
    expect(Object.keys(unsandboxedEnv).filter((k) => k.startsWith('AALIS_'))).toEqual([]);
    expect(unsandboxedEnv.PATH).toBeTruthy();
    const env = await credential.processEnv('sandbox');
    expect(Object.keys(env).filter((k) => k.startsWith('AALIS_') || k === 'SSH_AUTH_SOCK')).toEqual([]);
    expect(env.TMPDIR).toMatch(/\/tmp\/[0-9a-f]{2}\/session-[0-9a-f]{24}$/);
    expect(env.PATH).toBeTruthy();
    // installs use a pnpm store of their own, inside a writable cache, never the hard-linked one
    expect(env.pnpm_config_store_dir).toBe(`${home}/.cache/aalis-sandbox/pnpm-store`);
    expect(credential.allows('write', `${env.pnpm_config_store_dir}/v11/files/x`)).toBe(true);
  });

  it.each([
    ['login-shell', true],
    ['process', false],
  ] as const)("with ownerEnv '%s' the host environment comes from a login shell: %s", async (ownerEnv, fromShell) => {
    // a "login shell" that leaves a mark when it runs and adds a variable of its own
    const marker = join(root, `shell-ran-${ownerEnv}`);
    const shell = join(root, `login-${ownerEnv}.sh`);
    writeFileSync(shell, `#!/bin/sh\n: > '${marker}'\nFROM_LOGIN_SHELL=1 exec env -0\n`, { mode: 0o755 });
    process.env.AALIS_TEST_OWN_ENV = 'this-process';
    process.env.REACH_TEST_OWN_ENV = 'this-process';
    const { reach } = await start([], { loginShell: shell, ownerEnv });
    const unsandboxedEnv = await (await reach.forCall(turnOf(owner))).processEnv('host');
    expect(unsandboxedEnv.FROM_LOGIN_SHELL).toBe(fromShell ? '1' : undefined);
    expect(existsSync(marker)).toBe(fromShell);
    expect(unsandboxedEnv.REACH_TEST_OWN_ENV).toBe('this-process');
    expect(unsandboxedEnv.AALIS_TEST_OWN_ENV).toBeUndefined();
  });

  it.each([
    [{ allow: ['A B'] }, /env\.allow\.0.*not a variable name/],
    [{ allow: ['*'] }, /env\.allow\.0.*would match every variable/],
    [{ deny: ['X=1'] }, /env\.deny\.0.*not a variable name/],
    [{ allow: [], extra: true }, /extra/],
  ])('refuses a bad environment allow or deny list %j, naming the field (the plugin does not start)', async (env, expected) => {
    const kernel = createKernel({ dataDir: join(root, `data-${Math.random().toString(36).slice(2)}`) })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: root, form: 'source', userHome: home, loginShell: '/bin/sh', env } as never);
    const status = await kernel.start();
    const failed = status.find((s) => s.name === 'reach');
    expect(failed?.state).toBe('failed');
    expect(failed && 'cause' in failed ? String(failed.cause) : '').toMatch(expected);
    await kernel.stop();
  });

  it('a session in the confirm tier runs on the host and has no sandbox policy', async () => {
    const { reach, sessions } = await start([yes]);
    await sessions.change('s1', { tier: 'confirm' });
    const credential = await reach.forCall(turnOf(owner));
    expect(credential.exec).toBe('host');
    expect(() => credential.sandboxPolicy()).toThrow(/on the host/);
  });

  it("a new conversation starts from its own person's last used tier, not from another's", async () => {
    const { reach, sessions } = await start();
    await reach.forCall(turnOf(owner, 'owner-dm'));
    await sessions.change('owner-dm', { tier: 'full' });
    expect((await reach.forCall(turnOf(owner, 'owner-new'))).exec).toBe('host');
    const second = { platform: 'cli', userId: 'second-owner' };
    const fresh = await reach.forCall(turnOf(second, 'second-new'));
    expect(fresh.exec).toBe('sandbox');
    expect(await sessions.settings('second-new')).toMatchObject({ tier: 'workspace' });
  });

  it('resolves a symlinked workspace to its real path at bind time', async () => {
    const { kernel } = await start();
    const link = join(root, 'link-to-project');
    symlinkSync(project, link);
    expect(kernel.get(reachBindings).bind('s2', { home: link }).home).toBe(project);
    expect(kernel.get(reachBindings).bindingOf('s2').gitDirs).toEqual([join(project, '.git')]);
  });
});

describe('what a call reuses from the calls before it (reach-cache.ts)', () => {
  it('gives the calls of a conversation one policy object while nothing changes, and a new one when its settings, binding, grants or conversation do', async () => {
    const { kernel, reach, sessions } = await start([yes]);
    const first = (await reach.forCall(turnOf(owner))).sandboxPolicy();
    const again = await reach.forCall(turnOf(owner));
    // the same reach and no grants: nothing is resolved or compiled again
    expect(again.sandboxPolicy()).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.controlDeny)).toBe(true);

    // a downgrade: the calls issued before see it at once, the next ones too
    await sessions.change('s1', { tier: 'readonly', boundary: 'deny' });
    expect(again.sandboxPolicy().write).not.toContain(project);
    expect((await reach.forCall(turnOf(owner))).sandboxPolicy().write).not.toContain(project);
    await sessions.change('s1', { tier: 'workspace', boundary: 'ask' });
    expect((await reach.forCall(turnOf(owner))).sandboxPolicy()).toEqual(first);

    // a grant is this call's only: the next call has the reach's own policy again
    const granted = await reach.forCall(turnOf(owner));
    const target = join(outside, 'granted.txt');
    expect(await granted.require({ effect: 'write', path: target })).toEqual({ allowed: true });
    expect(granted.sandboxPolicy().write).toContain(target);
    const after = (await reach.forCall(turnOf(owner))).sandboxPolicy();
    expect(after.write).not.toContain(target);

    // another conversation has its own session temp, so its own policy
    const other = (await reach.forCall(turnOf(owner, 's-other'))).sandboxPolicy();
    expect(other.tmp).not.toBe(after.tmp);

    // a rebind is a new binding: its reach is resolved anew
    const elsewhere = join(root, 'rebound');
    mkdirSync(elsewhere, { recursive: true });
    kernel.get(reachBindings).bind('s1', { home: elsewhere });
    const rebound = (await reach.forCall(turnOf(owner))).sandboxPolicy();
    expect(rebound.write).toContain(elsewhere);
    expect(rebound.write).not.toContain(project);
  });

  it('hands the sandbox a policy it checks once: the same checked policy for every call of a conversation', async () => {
    const { reach } = await start();
    const requestOf = async () => ({ argv: ['/bin/true'], cwd: project, env: {}, timeoutMs: 1000, policy: (await reach.forCall(turnOf(owner))).sandboxPolicy() });
    const first = parseRunRequest('linux', await requestOf());
    expect(parseRunRequest('linux', await requestOf()).policy).toBe(first.policy);
  });

  it("filters the owner's environment once, and hands every call a copy of its own", async () => {
    const { reach } = await start([], { ownerEnv: 'process' });
    const one = await (await reach.forCall(turnOf(owner))).processEnv('sandbox');
    one.CHANGED_BY_ONE_CALL = 'yes';
    const two = await (await reach.forCall(turnOf(owner))).processEnv('sandbox');
    expect(two.CHANGED_BY_ONE_CALL).toBeUndefined();
    expect(two.AALIS_TEST_SECRET).toBeUndefined();
    expect(two.PATH).toBe(process.env.PATH);
    // the session's own variables are set on the copy, per conversation
    const other = await (await reach.forCall(turnOf(owner, 's-env'))).processEnv('sandbox');
    expect(other.TMPDIR).not.toBe(two.TMPDIR);
  });
});
