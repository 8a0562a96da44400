import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { makeScene, type Scene } from './scene.testing.js';

/*
 * The overlay as an unprivileged daemon (nobody) meets it: the overlay is mounted in a user
 * namespace of its own, the command keeps the daemon's ids. Skipped (and so reported) where nobody
 * cannot read this checkout.
 */

const child = join(import.meta.dirname, 'overlay.child.testing.ts');
const able = canRunAsNobody(child);
/** `stderr` without the notes about host sockets of other processes that could not be located. */
const withoutSocketNotes = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => !l.startsWith('aalis: a host socket could not be located'))
    .join('\n');

// each case with the per-run chain (the shell step: unshare, sh, one mount(8) per root) and with
// the launcher's child mounting the overlays (`launcher: all`, a daemon's setting)
for (const launcher of ['on', 'all'] as const) {
  describe.skipIf(!able)(`the overlay as an unprivileged user (nobody), launcher ${launcher}`, { timeout: 120_000 }, () => {
    let s: Scene;
    beforeAll(() => {
      if (!able) return;
      s = makeScene();
      writeFileSync(join(s.ws, 'gone.txt'), 'bye\n');
      mkdirSync(join(s.ws, 'movable/in'), { recursive: true });
      writeFileSync(join(s.ws, 'movable/in/x.txt'), 'x\n');
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
    });
    afterAll(() => s?.cleanup());

    it('a landing is never on the host during the run; allowed writes, appends, deletes and a directory renamed land after; a hard-linked protected inode is unchanged', async () => {
      const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, 'cases', JSON.stringify(s));
      const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', AALIS_TEST_LAUNCHER: launcher }, extendEnv: false, reject: false, timeout: 100_000 });
      // other test files' relative or odd host sockets, listening at the same moment, add this note (seen in CI)
      expect(withoutSocketNotes(r.stderr)).toBe('');
      const out = JSON.parse(r.stdout);
      expect(out.probe.ok).toBe(true);
      expect(out.probe.detail).toContain('unprivileged user namespace');
      expect(out.polls).toBeGreaterThan(20);
      expect(out.seen).toBe(0);
      expect(out.landing.exitCode).toBe(0);
      expect(out.landing.deniedWrites).toEqual(expect.arrayContaining(['pkg/.envrc', 'pkg/.github/workflows/ci.yml', 'pkg/.git/hooks/pre-commit'].map((p) => join(s.ws, p))));
      for (const p of ['pkg/.envrc', 'pkg/.github', 'pkg/.git']) expect(existsSync(join(s.ws, p)), p).toBe(false);
      expect(readFileSync(join(s.ws, 'pkg/fine.txt'), 'utf8')).toBe('ok\n');
      expect(readFileSync(join(s.ws, 'src/a.txt'), 'utf8')).toBe('a\nmore\n');
      expect(existsSync(join(s.ws, 'gone.txt'))).toBe(false);
      expect(existsSync(join(s.ws, 'movable'))).toBe(false); // a directory renamed
      expect(readFileSync(join(s.ws, 'moved/in/x.txt'), 'utf8')).toBe('x\n');
      expect(statSync(join(s.ws, 'pkg/fine.txt')).uid).toBe(NOBODY);
      expect(out.link.stdout).toBe(`${NOBODY}\n`); // the command keeps the daemon's uid
      expect(readFileSync(join(s.control, 'state.json'), 'utf8')).toBe('{}\n');
      expect(readFileSync(join(s.ws, 'alias.json'), 'utf8')).toBe('changed\n');
      // a directory the command made unreadable (-wx) is committed whole, with its mode
      expect(withoutSocketNotes(out.sealed.stderr)).toBe('');
      expect(readFileSync(join(s.ws, 'sealed/in/f'), 'utf8')).toBe('s\n');
      expect(statSync(join(s.ws, 'sealed')).mode & 0o777).toBe(0o300);
    });
  });
}
