import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * h109: the bare-repository disguise without objects and refs in the folder. git's
 * is_git_directory (setup.c) takes a folder for a git directory when it holds a valid HEAD and
 * its *common dir* holds objects/ and refs/: the common dir is the folder itself, or where a
 * `commondir` file in it says. So docs/HEAD + docs/commondir ("store") + docs/store/{objects,refs,config}
 * is a repository at docs whose config (read from the common dir) git obeys; no folder holds all
 * three of HEAD, objects and refs, and completesDisguise (upper-commit.ts) lets it land under a
 * policy without the reach's HEAD landing, which s52 says it refuses "whatever the policy".
 */
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const sandbox = () => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
const run = (dir: string, script: string) => sandbox().run(req(s, ['sh', '-c', script], { policy: workspacePolicy(s), cwd: dir }));

describe('h109: the disguise through commondir', { timeout: 120_000 }, () => {
  it('docs/HEAD with a commondir naming a folder of objects, refs and a config is refused', async () => {
    const d = join(s.ws, 'commondir');
    mkdirSync(join(d, 'docs'), { recursive: true });
    execFileSync('git', ['init', '-q', d]);
    const r = await run(
      d,
      'mkdir -p docs/store/objects docs/store/refs/heads && printf "[core]\\n\\tpager = touch pwned\\n" > docs/store/config && echo store > docs/commondir && echo "ref: refs/heads/main" > docs/HEAD',
    );
    // git on the host now takes docs for a repository of its own, and runs its config's pager on a terminal (git branch pages by default)
    const gitDir = execFileSync('git', ['-C', join(d, 'docs'), 'rev-parse', '--absolute-git-dir'], { encoding: 'utf8' });
    execFileSync('script', ['-qc', 'git branch', '/dev/null'], { cwd: join(d, 'docs'), stdio: 'ignore', env: { ...process.env, HOME: s.home } });
    expect(existsSync(join(d, 'docs', 'pwned')) || existsSync(join(d, 'docs', 'store', 'pwned')), 'git branch in docs ran the command\'s pager').toBe(false);
    expect(gitDir).toBe(`${join(d, '.git')}\n`);
    expect(r.writeDenied, r.stderr).toBe(true);
  });
});
