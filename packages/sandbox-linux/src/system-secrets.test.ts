import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * A daemon run as root runs its commands as the host's uid 0 (without capabilities): the machine's
 * own secrets and other people's credentials are readable to uid 0, so the deny-read list names
 * them. Real sandboxed processes; the host's /etc/shadow is the real one.
 */

const root = process.geteuid?.() === 0;
const hostKey = ['ed25519', 'ecdsa', 'rsa'].map((k) => `/etc/ssh/ssh_host_${k}_key`).find((p) => existsSync(p));
let t: Scene;
let sb: ReturnType<typeof createLinuxSandbox>;
beforeAll(() => {
  t = makeScene();
  sb = createLinuxSandbox({ scan: { home: t.home }, undoneDir: join(t.root, 'undone') });
});
afterAll(() => execFileSync('rm', ['-rf', t.root]));

describe.skipIf(!root)('as root, the machine secrets and other accounts\' credentials stay unread', { timeout: 60_000 }, () => {
  it('/etc/shadow and /etc/gshadow read empty or refuse, though root reads them on the host', async () => {
    expect(readFileSync('/etc/shadow', 'utf8')).toContain('root:');
    const r = await sb.run(req(t, ['sh', '-c', 'cat /etc/shadow /etc/gshadow 2>&1; echo done'], { policy: reachPolicyOf(t) }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('done');
    expect(r.stdout).not.toContain('root:');
  });

  it.skipIf(hostKey === undefined)('an SSH host private key is hidden (where sshd made one); its .pub half stays readable', async () => {
    const key = hostKey as string;
    const r = await sb.run(req(t, ['sh', '-c', `cat ${key} 2>&1; test -r ${key}.pub && echo pub-readable`], { policy: reachPolicyOf(t) }));
    expect(r.stdout).not.toContain('PRIVATE KEY');
    if (existsSync(`${key}.pub`)) expect(r.stdout).toContain('pub-readable');
  });

  it("another account's ~/.ssh and ~/.aws are hidden like the user's own", async () => {
    const bob = join(t.root, 'bob');
    mkdirSync(join(bob, '.ssh'), { recursive: true });
    mkdirSync(join(bob, '.aws'), { recursive: true });
    writeFileSync(join(bob, '.ssh', 'id_ed25519'), 'BOB PRIVATE KEY\n');
    writeFileSync(join(bob, '.aws', 'credentials'), 'BOB AWS SECRET\n');
    writeFileSync(join(bob, 'notes.txt'), 'bob notes\n');
    const cmd = `cat ${bob}/.ssh/id_ed25519 ${bob}/.aws/credentials ${bob}/notes.txt 2>&1; true`;
    const r = await sb.run(req(t, ['sh', '-c', cmd], { policy: reachPolicyOf(t, { otherHomes: [bob] }) }));
    expect(r.stdout).not.toContain('BOB PRIVATE KEY');
    expect(r.stdout).not.toContain('BOB AWS SECRET');
    expect(r.stdout).toContain('bob notes');
  });
});
