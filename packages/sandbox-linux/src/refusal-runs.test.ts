import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

// Real sandboxed commands, their refusals read from what coreutils and Python printed (api-reach's
// shared reader, then linuxRefusal's test), as root and as nobody.
const child = join(import.meta.dirname, 'refusal.child.testing.ts');
let s: Scene;
beforeAll(() => {
  s = makeScene();
  writeFileSync(join(s.home, 'keep'), 'k\n');
});
afterAll(() => s?.cleanup());

describe('refused writes read from a real sandboxed command', { timeout: 120_000 }, () => {
  it('names both ends of a refused mv, a quote in a name, and a name that is not UTF-8 (with U+FFFD)', async () => {
    const h = s.home;
    const script = `mv ${h}/keep ${h}/moved; touch "${h}/n$(printf '\\377')"; python3 -c "open('${h}/q\\"x','w')"; echo done`;
    const r = await createLinuxSandbox().run(req(s, ['sh', '-c', script]));
    expect(r.stdout).toBe('done\n');
    expect(r.stderr).toContain(`mv: cannot move '${h}/keep' to '${h}/moved': Read-only file system`);
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites).toEqual([join(h, 'keep'), join(h, 'moved'), join(h, 'n\uFFFD'), join(h, 'q"x')]);
  });
});

describe.skipIf(!canRunAsNobody(child))('as nobody', { timeout: 120_000 }, () => {
  it("the host's own permissions (EACCES) are not the sandbox's refusal; a read-only mount (EROFS) is", async () => {
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
    const locked = join(s.ws, 'src', 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o755); // root's: nobody may not write in it, on the host or in the sandbox
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s));
    const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<'locked' | 'outside', { denied: boolean; paths: string[]; stderr: string }>;
    expect(out.locked.stderr).toContain('Permission denied');
    expect(out.locked).toMatchObject({ denied: false, paths: [] });
    expect(out.outside.stderr).toContain('Read-only file system');
    expect(out.outside).toMatchObject({ denied: true, paths: [join(s.home, 'new.txt')] });
  });
});
