// The sandboxed command's environment, end to end: secrets set on the daemon do not reach a
// real sandboxed `env` (bubblewrap, through the run_command tool, the sandbox service and the
// environment plugin-reach builds), and a variable the config allows does.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { sandboxPlugin } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type Kernel, sessions, sessionsPlugin, tools, toolsPlugin } from '@aalis/core';
import { approvalPlugin } from '@aalis/plugin-approval';
import { reachBindings, reachPlugin } from '@aalis/plugin-reach';
import { builtinToolsPlugin } from '@aalis/plugin-tools';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SET_ON_DAEMON = {
  GITHUB_TOKEN: 'ghp_daemon-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-daemon-secret',
  OPENAI_API_KEY: 'sk-daemon-secret',
  MY_SERVICE_PASSWORD: 'hunter2',
  AALIS_CANARY: 'aalis-daemon-secret',
  NPM_TOKEN: 'npm-allowed-value',
  AALIS_ENV_CANARY_PLAIN: 'x',
  PLAIN_SETTING: 'plain-value',
} as const;

describe.runIf(process.platform === 'linux')('a sandboxed command\'s environment', () => {
  const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-secret-env-')));
  let kernel: Kernel;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const [k, v] of Object.entries(SET_ON_DAEMON)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    const project = join(root, 'project');
    mkdirSync(project, { recursive: true });
    kernel = createKernel({ dataDir: join(root, 'data') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { chat: ['owner'] } })
      .use(approvalPlugin, { timeoutMs: 1000 })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: root, loginShell: '/bin/sh', env: { allow: ['NPM_TOKEN'], deny: ['PLAIN_*'] } })
      .use(toolsPlugin)
      .use(builtinToolsPlugin)
      .use(sandboxPlugin(createLinuxSandbox()));
    const status = await kernel.start();
    expect(status.filter((s) => s.state !== 'running')).toEqual([]);
    expect((await kernel.get(sessions).change('env', { tier: 'workspace', boundary: 'deny' })).ok).toBe(true);
    kernel.get(reachBindings).bind('env', { home: project });
  });
  afterAll(async () => {
    await kernel?.stop();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(root, { recursive: true, force: true });
  });

  it('shows no credential set on the daemon, shows the allow-listed one, and drops what the deny list adds', async () => {
    const owner = { platform: 'chat', userId: 'owner' };
    const outcome = await kernel.get(tools).dispatch({
      tool: 'run_command',
      params: { command: 'env' },
      turn: { session: { id: 'env' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: 'm1' }, category: 'own' },
    });
    expect(outcome).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0 } });
    const stdout = (outcome as { value: { stdout: string } }).value.stdout;
    const seen = new Map(stdout.split('\n').flatMap((line) => (line.includes('=') ? [[line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const] : [])));
    expect(seen.get('PATH')).toBeTruthy(); // the command did print its environment
    for (const name of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'OPENAI_API_KEY', 'MY_SERVICE_PASSWORD', 'AALIS_CANARY', 'AALIS_ENV_CANARY_PLAIN', 'PLAIN_SETTING']) {
      expect(seen.has(name), `${name} reached the sandbox`).toBe(false);
    }
    expect(stdout).not.toMatch(/daemon-secret|hunter2/);
    expect(seen.get('NPM_TOKEN')).toBe('npm-allowed-value');
  });
});
