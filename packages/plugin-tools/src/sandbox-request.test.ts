import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunRequest, reach } from '@aalis/api-reach';
import type { OriginTurn } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { commandPolicyOf } from './sandbox-request.js';
import { installOf, startToolsKernel } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-request-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const owner = { platform: 'chat', userId: 'owner' };
const turn: OriginTurn = { session: { id: 'main' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: 'm' }, category: 'own' };

describe('commandPolicyOf', () => {
  it('gives the calls of a conversation one network-off policy, which the sandbox checks once', async () => {
    const project = join(root, 'project');
    mkdirSync(project, { recursive: true });
    const { kernel } = await startToolsKernel({ dataDir: join(root, 'data'), home: join(root, 'home'), project, install: installOf(root), tier: 'workspace' });
    try {
      const policyOfACall = async (network?: 'on' | 'off') => commandPolicyOf(await kernel.get(reach).forCall(turn), network);
      const off = await policyOfACall('off');
      expect(off.network).toBe('off');
      expect(await policyOfACall('off')).toBe(off);
      // the tier's own network stays for a command that did not ask for it off
      expect((await policyOfACall()).network).toBe('on');
      const request = { argv: ['/bin/true'], cwd: project, env: {}, timeoutMs: 1000 };
      expect(parseRunRequest('linux', { ...request, policy: await policyOfACall('off') }).policy).toBe(parseRunRequest('linux', { ...request, policy: off }).policy);
    } finally {
      await kernel.stop();
    }
  });
});
