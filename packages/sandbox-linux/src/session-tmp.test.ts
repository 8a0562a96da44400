import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { translatePolicy } from './translate.js';

const sb = createLinuxSandbox();
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s?.cleanup());

describe('/tmp inside the sandbox is the session temp', { timeout: 60_000 }, () => {
  it('keeps a file written to /tmp after the run, at the session temp on the host, with TMPDIR pointing there', async () => {
    const r = await sb.run(req(s, ['sh', '-c', 'echo kept > /tmp/made-in-run && echo "$TMPDIR" && cat "$TMPDIR/made-in-run"']));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${s.sessionTmp}\nkept\n`);
    expect(readFileSync(join(s.sessionTmp, 'made-in-run'), 'utf8')).toBe('kept\n');
    expect(existsSync('/tmp/made-in-run')).toBe(false);
    const again = await sb.run(req(s, ['cat', '/tmp/made-in-run']));
    expect(again.stdout).toBe('kept\n');
    expect(r.stderr).not.toMatch(/aalis: \/tmp/);
  });

  it('refuses at /tmp what the policy refuses in the session temp (a landing there)', async () => {
    mkdirSync(join(s.sessionTmp, 'repo', '.git', 'hooks'), { recursive: true });
    const r = await sb.run(req(s, ['sh', '-c', `echo x > /tmp/repo/.git/hooks/pre-commit; echo x > ${s.sessionTmp}/repo/.git/hooks/post-commit; echo done`]));
    expect(r.stdout).toBe('done\n');
    expect(r.stderr).toMatch(/\/tmp\/repo\/.git\/hooks\/pre-commit: Read-only file system/);
    expect(existsSync(join(s.sessionTmp, 'repo', '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(s.sessionTmp, 'repo', '.git', 'hooks', 'post-commit'))).toBe(false);
  });

  it('says so on stderr when the policy has no session temp, and /tmp is private then', async () => {
    const { tmp: _, ...policy } = workspacePolicy(s);
    const r = await sb.run(req(s, ['sh', '-c', 'echo x > /tmp/private-only'], { policy }));
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/^aalis: \/tmp in the sandbox was private and is gone with the command \(the policy names no session temp\)$/m);
    expect(existsSync(join(s.sessionTmp, 'private-only'))).toBe(false);
  });

  it.each([
    ['a session temp', '/srv/s/tmp', [], { kind: 'session', path: '/srv/s/tmp' }, '--bind /srv/s/tmp /tmp'],
    ['a root under /tmp', '/srv/s/tmp', ['/tmp/ws'], { kind: 'private', reason: '"/tmp/ws" lies under the host\'s /tmp' }, '--tmpfs /tmp'],
    ['no session temp', undefined, [], { kind: 'private', reason: 'the policy names no session temp' }, '--tmpfs /tmp'],
    ['/tmp named itself', '/srv/s/tmp', ['/tmp'], { kind: 'host' }, undefined],
  ] as const)('plans /tmp for %s', (_, tmp, extra, plan, arg) => {
    const write = ['/srv/s/ws', ...(tmp ? [tmp] : []), ...extra];
    const policy = { ...workspacePolicy(s), readDeny: [], writeDeny: [], controlDeny: [], write, readAllowWithin: tmp ? [tmp] : [], unixSockets: [], tmp };
    const kinds = new Map(write.map((p) => [p, 'dir' as const]));
    const t = translatePolicy(policy, { kinds, found: [], sockets: [], visited: 0 }, { cwd: '/srv/s/ws', emptyFile: '/e' });
    expect(t.tmp).toEqual(plan);
    if (arg) expect(t.args.join(' ')).toContain(arg);
    else expect(t.args.join(' ')).not.toMatch(/--tmpfs \/tmp|\/srv\/s\/tmp \/tmp/);
  });
});
