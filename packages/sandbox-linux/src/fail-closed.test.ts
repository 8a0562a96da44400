import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

let s: Scene;
let marker: string;
beforeAll(() => {
  s = makeScene();
  marker = join(s.ws, 'must-not-exist');
});
afterAll(() => s.cleanup());

async function refused(run: Promise<unknown>): Promise<SandboxUnavailableError> {
  const e = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SandboxUnavailableError);
  expect(existsSync(marker)).toBe(false);
  return e as SandboxUnavailableError;
}

describe('fail closed: the command does not run', { timeout: 120_000 }, () => {
  it('without bubblewrap, and the error says how to install it', async () => {
    const sb = createLinuxSandbox({ bwrap: '/nonexistent/bwrap' });
    const e = await refused(sb.run(req(s, ['touch', marker])));
    expect(e.reason).toContain('bubblewrap');
    expect(e.fix).toContain('apt-get install -y bubblewrap');
    const probe = await sb.probe();
    expect(probe.available).toBe(false);
    expect(probe.checks[0]).toMatchObject({ name: 'bubblewrap', ok: false });
  });

  it('when the seccomp filter does not load', async () => {
    const bad = Buffer.alloc(8); // one instruction that is not a valid BPF opcode
    bad.writeUInt16LE(0xffff, 0);
    const sb = createLinuxSandbox({ seccompFilter: bad });
    const e = await refused(sb.run(req(s, ['touch', marker])));
    expect(e.reason).toMatch(/seccomp/);
    expect((await sb.probe()).checks.find((c) => c.name === 'seccomp')?.ok).toBe(false);
  });

  it.each([
    ['a pattern outside the contract subset', { readDeny: [{ pattern: '(?<=x)\\.env' }] }],
    ['a relative write root', { write: ['ws'] }],
    ['a write root with ..', { write: ['/var/tmp/../etc'] }],
  ])('for a policy that cannot be translated: %s', async (_, bad) => {
    const e = await refused(createLinuxSandbox().run(req(s, ['touch', marker], { policy: { ...workspacePolicy(s), ...bad } })));
    expect(e.fix).toMatch(/nothing was run|absolute/);
  });

  it('when the workspace is larger than the scan may walk', async () => {
    const e = await refused(createLinuxSandbox({ scan: { maxEntries: 3 } }).run(req(s, ['touch', marker])));
    expect(e.reason).toMatch(/more than 3 entries/);
  });

  it('with network on but no slirp4netns; network off still runs', async () => {
    const sb = createLinuxSandbox({ slirp4netns: '/nonexistent/slirp4netns' });
    const e = await refused(sb.run(req(s, ['touch', marker], { policy: workspacePolicy(s, { network: 'on' }) })));
    expect(e.fix).toContain('apt-get install -y slirp4netns');
    expect((await sb.run(req(s, ['true']))).exitCode).toBe(0);
  });

  it('when user namespaces are disabled, and the fix names the knob', async () => {
    // The outer sandbox forbids new user namespaces for everything inside it, as the kernel
    // setting or AppArmor would; the daemon's code then runs in there for real.
    const outer = ['--unshare-user', '--disable-userns', '--dev-bind', '/', '/', '--proc', '/proc', '--'];
    const child = join(import.meta.dirname, 'fail-closed.child.testing.ts');
    const r = await execa('bwrap', [...outer, process.execPath, '--import', 'tsx', child, s.ws, marker], { reject: false, cwd: join(import.meta.dirname, '..') });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { probe: { available: boolean; checks: { name: string; ok: boolean; fix?: string }[] }; run: { name: string; fix: string }; markerWritten: boolean };
    expect(out.probe.available).toBe(false);
    expect(out.probe.checks.find((c) => c.name === 'user-namespaces')).toMatchObject({ ok: false });
    expect(out.run.name).toBe('SandboxUnavailableError');
    expect(out.run.fix).toMatch(/sysctl|AppArmor/);
    expect(out.markerWritten).toBe(false);
  });
});
