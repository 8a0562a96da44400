import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, type Scene } from './scene.testing.js';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';

const child = join(import.meta.dirname, 'unprivileged.child.testing.ts');

const able = canRunAsNobody(child);
const servers: Server[] = [];
/** A listener on the host's 127.0.0.1 answering `hello`. */
function listen(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer((c) => c.end('hello\n'));
    servers.push(srv);
    srv.listen(0, '127.0.0.1', () => resolve((srv.address() as { port: number }).port));
  });
}
afterAll(() => {
  for (const srv of servers) srv.close();
});

// CI runs as root; the daemon usually does not. The same checks as another user, switched with
// setpriv; skipped (and so reported) where that user cannot read this checkout. Each with the
// per-run chain (unshare, sh, one mount(8) per root) and with the launcher's child mounting the
// overlays (`launcher: all`, a daemon's setting), on a scene of its own.
for (const launcher of ['on', 'all'] as const) {
  describe.skipIf(!able)(`as an unprivileged user (nobody), launcher ${launcher}`, { timeout: 120_000 }, () => {
    let s: Scene;
    beforeAll(() => {
      if (!able) return;
      s = makeScene();
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
    });
    afterAll(() => s?.cleanup());

    it('runs, writes where allowed, refuses the landings and the deny-read list, and filters the localPorts', async () => {
      const ports = { denied: await listen(), other: await listen() };
      const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s), JSON.stringify(ports));
      const r = await execa(cmd!, args, {
        cwd: join(import.meta.dirname, '..'),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', AALIS_TEST_LAUNCHER: launcher },
        extendEnv: false,
        reject: false,
        timeout: 100_000, // under the test's own timeout, so a hang shows its stderr
      });
      expect(r.stderr).toBe('');
      const out = JSON.parse(r.stdout);
      expect(out.available).toBe(true);
      expect(out.step).toBe(launcher === 'all' ? 'user_step' : 'unshare');
      expect(out.id.out).toBe(String(NOBODY));
      // /tmp is the session temp, and what the command made there belongs to nobody on the host, not root
      expect(out.tmp.out).toBe(s.sessionTmp);
      expect(statSync(join(s.sessionTmp, 'nobody-tmp')).uid).toBe(NOBODY);
      expect(out.write).toMatchObject({ out: 'ok', exit: 0 });
      expect(out.hook).toMatchObject({ denied: true });
      expect(out.env.out).toBe('');
      expect(out.key.out).toBe('');
      expect(out.envrc).toMatchObject({ denied: true });
      expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
      expect(out.network).toMatchObject({ out: '1', exit: 0 }); // slirp4netns entered the sandbox's namespaces as nobody
      // nft put the localPorts filter in place as nobody, and the command could not remove it
      expect(out.filter.out).toMatch(/^flush=[1-9]\d*\nConnectionRefusedError\nhello$/);
    });
  });
}
