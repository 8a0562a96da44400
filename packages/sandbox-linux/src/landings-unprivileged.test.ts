import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, type Scene } from './scene.testing.js';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';

const child = join(import.meta.dirname, 'landings-unprivileged.child.testing.ts');

const able = canRunAsNobody(child);
let s: Scene;
let installed: string;
let stored: string;
beforeAll(() => {
  if (!able) return;
  s = makeScene();
  installed = join(s.root, 'install/node_modules/zod/index.js');
  stored = join(s.home, '.local/share/pnpm/store/v11/files/ab/cdef-index.js');
  for (const f of [installed, stored]) mkdirSync(dirname(f), { recursive: true });
  writeFileSync(installed, 'original\n');
  linkSync(installed, stored);
  mkdirSync(join(s.ws, '.git/hooks/node_modules'), { recursive: true });
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
});
afterAll(() => s?.cleanup());

// The same landings as landings.test.ts, as another user than root (the daemon usually is not
// root); skipped (and so reported) where that user cannot read this checkout.
describe.skipIf(!able)('landings as an unprivileged user (nobody)', { timeout: 120_000 }, () => {
  it("refuses the table's landings, node_modules under .git/hooks and the hard-linked store; the rest stays writable", async () => {
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s), stored);
    const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 100_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as Record<string, number>;
    expect(out).toMatchObject({ ordinary: 0, npmContent: 0 });
    for (const denied of ['claude', 'workflow', 'hooksNodeModules', 'npx', 'store', 'hostNpmContent']) expect(out[denied], denied).not.toBe(0);
    expect(readFileSync(installed, 'utf8')).toBe('original\n');
    expect(existsSync(join(s.ws, 'CLAUDE.md'))).toBe(false);
    expect(existsSync(join(s.ws, '.git/hooks/node_modules/x'))).toBe(false);
  });
});
