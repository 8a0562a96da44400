// Spec tools through the real dispatcher, reach credential and approval desk, on the real Docker
// engine and the real Linux sandbox (profile local). Every test counts this kernel's containers
// (its own instance label) before and after: none outlives its call.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessions, tools } from '@aalis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containersOf, createdSince, engineSkip, type SpecEnv, startSpecEnv, tempDir } from './spec-tools.testing.js';

const ALL = ['echo_env', 'garbage', 'hang', 'risky', 'zone_local', 'zone_stdio', 'bad_field', 'net_probe', 'net_stdio'];

describe.skipIf(engineSkip)('spec tools on the real engine', () => {
  let env: SpecEnv;
  const tzBefore = process.env.TZ;
  beforeEach(async () => {
    // The host's zone for the local-profile row of 002's table: the login env the credential gives carries it.
    process.env.TZ = 'Asia/Shanghai';
    env = await startSpecEnv({ toolsDir: join(tempDir(), 'tools'), fixtures: ALL });
    expect(containersOf(env.instance)).toEqual([]);
  });
  afterEach(async () => {
    expect(containersOf(env.instance)).toEqual([]);
    await env.stop();
    if (tzBefore === undefined) delete process.env.TZ;
    else process.env.TZ = tzBefore;
  });

  it('lists spec tools with their JSON Schema and effective risk; the bad spec is left out', async () => {
    const list = env.kernel.get(tools).list();
    expect(list.filter((t) => ALL.includes(t.name)).map((t) => [t.name, t.risk])).toEqual([
      ['echo_env', 'low'],
      ['garbage', 'low'],
      ['hang', 'low'],
      ['net_probe', 'low'],
      ['net_stdio', 'low'],
      ['risky', 'high'],
      ['zone_local', 'low'],
      ['zone_stdio', 'low'],
    ]);
    expect(list.find((t) => t.name === 'tool_manager')).toMatchObject({ risk: 'high' });
    const params = env.kernel.get(tools).parametersOf('echo_env');
    expect(params?.safeParse({ word: 'hi' }).success).toBe(true);
    expect(params?.safeParse({ word: '' }).success).toBe(false);
  });

  it('a stdio tool answers through the envelope, as uid 10001 in a container that sees UTC', async () => {
    const outcome = await env.call('echo_env', { word: 'hello' });
    expect(outcome).toMatchObject({
      ok: true,
      value: { envelope: { tool: 'echo_env', params: { word: 'hello' }, call: { id: expect.any(String), session: 'main', principal: 'chat:owner' } }, tz: '+0000', uid: 10001 },
    });
  });

  it('bad params never start anything', async () => {
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    expect(await env.call('echo_env', { word: 'x', extra: 1 })).toMatchObject({ ok: false, kind: 'invalid-params' });
    expect(createdSince(env.instance, since)).toBe(0);
  });

  it('002 table: the container zone proves isolation (+0000) where the local profile sees the host zone (+0800)', async () => {
    const local = await env.call('zone_local', {});
    const container = await env.call('zone_stdio', {});
    expect(local).toMatchObject({ ok: true, value: { tz: '+0800' } });
    expect(container).toEqual({ ok: true, value: { tz: '+0000' } });
  });

  it('profile local: the environment is cleared to the allow list plus the spec env', async () => {
    process.env.TOOL_FLAG = '1';
    process.env.AALIS_SPEC_SECRET_TEST = 'nope';
    try {
      const outcome = (await env.call('zone_local', {})) as { ok: true; value: { env: string } };
      const names = outcome.value.env.trim().split(' ');
      expect(names).not.toContain('AALIS_SPEC_SECRET_TEST');
      expect(names).toContain('TOOL_FLAG');
      // TMP and TEMP: the Linux sandbox points them at the call's temp, as it does TMPDIR.
      for (const name of names) expect(['PATH', 'HOME', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR', 'TMP', 'TEMP', 'TOOL_FLAG', 'PWD', 'SHLVL', '_'].includes(name) || name.startsWith('LC_')).toBe(true);
    } finally {
      delete process.env.TOOL_FLAG;
      delete process.env.AALIS_SPEC_SECRET_TEST;
    }
  });

  it('profile network: a network where the tier has one; where it has none, asked first, and refused nothing starts', async () => {
    const open = (await env.call('net_probe', {})) as { ok: true; value: string };
    expect(open.value.trim().split(' ').sort()).toEqual(['eth0', 'lo']);
    await env.kernel.get(sessions).change('main', { tier: 'readonly' });
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    env.answers = ['reject'];
    expect(await env.call('net_probe', {})).toMatchObject({ ok: false, kind: 'denied' });
    expect(env.asked.at(-1)?.subject).toMatchObject({ kind: 'network', via: 'command' });
    expect(createdSince(env.instance, since)).toBe(0);
  });

  it('profile stdio has no network whatever the tier: only the loopback', async () => {
    expect(await env.call('net_stdio', {})).toEqual({ ok: true, value: 'lo ' });
  });

  it('in confirm (commands on the host), a container tool runs unasked and a local one is asked as the host command it is', async () => {
    await env.kernel.get(sessions).change('main', { tier: 'confirm' });
    expect(await env.call('zone_stdio', {})).toEqual({ ok: true, value: { tz: '+0000' } });
    expect(env.asked).toHaveLength(0);
    env.answers = ['reject'];
    expect(await env.call('zone_local', {})).toMatchObject({ ok: false, kind: 'denied' });
    expect(env.asked[0]?.subject).toMatchObject({ kind: 'host-exec', argv: ['/bin/sh', '-c', expect.any(String)] });
    env.answers = ['approve'];
    expect(await env.call('zone_local', {})).toMatchObject({ ok: true, value: { tz: '+0800' } });
  });

  it('a call for someone who is not an owner runs nothing', async () => {
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    expect(await env.callAsStranger('zone_stdio', {})).toMatchObject({ ok: false, kind: 'denied', message: expect.stringContaining('no local effect') });
    expect(createdSince(env.instance, since)).toBe(0);
  });

  it('a tool that prints text is bad-output, never a success', async () => {
    expect(await env.call('garbage', {})).toMatchObject({ ok: false, kind: 'bad-output', message: expect.stringContaining('one JSON result') });
  });

  it('a tool that hangs is killed at its timeout and its container is gone when the call returns', async () => {
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    const started = Date.now();
    const outcome = await env.call('hang', {});
    expect(outcome).toMatchObject({ ok: false, kind: 'timeout' });
    // ended at its limit (1.5 s), not with the command (600 s); the margin is for a loaded engine
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(createdSince(env.instance, since)).toBe(1);
    expect(containersOf(env.instance)).toEqual([]);
  });

  it('a high-risk tool is asked once before any container starts, and runs once approved', async () => {
    env.answers = ['hold'];
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    const running = env.call('risky', {});
    while (env.asked.length === 0) await new Promise((r) => setTimeout(r, 20));
    // Pending: nothing was created yet (a look after a while: a container made in it would count;
    // a longer wait only makes the test slower).
    await new Promise((r) => setTimeout(r, 500));
    expect(createdSince(env.instance, since)).toBe(0);
    expect(env.asked[0]?.subject).toMatchObject({ kind: 'tool', tool: 'risky', rule: 'high-risk' });
    const [pending] = env.desk().pending('main');
    await env.desk().reply({ code: pending?.code ?? '', decision: 'approve', by: { platform: 'chat', userId: 'owner' } });
    expect(await running).toEqual({ ok: true, value: 'ran' });
    expect(env.asked).toHaveLength(1);
    expect(createdSince(env.instance, since)).toBe(1);
  });

  it('a rejected high-risk tool never starts a container', async () => {
    env.answers = ['reject'];
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    expect(await env.call('risky', {})).toMatchObject({ ok: false, kind: 'rejected' });
    expect(env.asked).toHaveLength(1);
    expect(createdSince(env.instance, since)).toBe(0);
  });

  it('two concurrent calls each get their own container and their own envelope', async () => {
    const since = Date.now() / 1000; // fractional: a container made earlier in the same second is not counted
    const [a, b] = await Promise.all([env.call('echo_env', { word: 'a' }), env.call('echo_env', { word: 'b' })]);
    expect(a).toMatchObject({ ok: true, value: { envelope: { params: { word: 'a' } } } });
    expect(b).toMatchObject({ ok: true, value: { envelope: { params: { word: 'b' } } } });
    const ids = [a, b].map((o) => (o as { value: { envelope: { call: { id: string } } } }).value.envelope.call.id);
    expect(new Set(ids).size).toBe(2);
    expect(createdSince(env.instance, since)).toBe(2);
  });
});

describe('a host deployment without an engine', () => {
  it('refuses container profiles (nothing runs) and still runs profile local', async () => {
    const env = await startSpecEnv({ toolsDir: join(tempDir(), 'tools'), docker: false, fixtures: ['zone_stdio', 'zone_local'] });
    try {
      expect(await env.call('zone_stdio', {})).toMatchObject({ ok: false, kind: 'unavailable', message: expect.stringContaining('no Docker engine is configured') });
      expect(await env.call('zone_local', {})).toMatchObject({ ok: true });
    } finally {
      await env.stop();
    }
  });

  it("refuses a non-owner's call of a high-risk spec tool before the gate: nobody is asked (F14)", async () => {
    const toolsDir = join(tempDir(), 'tools');
    mkdirSync(join(toolsDir, 'risky_local'), { recursive: true });
    const spec = { name: 'risky_local', description: 'high-risk, on the host', risk: 'high', sandbox: { profile: 'local' }, command: ['/bin/sh', '-c', 'echo \'{"ok":true,"value":"ran"}\''] };
    writeFileSync(join(toolsDir, 'risky_local', 'tool.json'), JSON.stringify(spec));
    const env = await startSpecEnv({ toolsDir, docker: false });
    try {
      env.answers = ['approve'];
      expect(await env.callAsStranger('risky_local', {})).toMatchObject({ ok: false, kind: 'denied', message: expect.stringMatching(/not an owner.*nobody was asked/) });
      expect(env.asked).toEqual([]);
      // the owner's own call is still asked, and runs once approved
      expect(await env.call('risky_local', {})).toEqual({ ok: true, value: 'ran' });
      expect(env.asked).toHaveLength(1);
    } finally {
      await env.stop();
    }
  });
});
