// h109: bareDisguiseOf counts HEAD, objects and refs in one folder; git's is_git_directory looks
// for objects/ and refs/ in the folder's common dir, which a `commondir` file in it names. So a
// folder with commondir -> store (store holding objects/, refs/ and a config with core.pager) is
// completed by a HEAD alone, and git run there obeys store/config. Real files, real git.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { afterAll, expect, it } from 'vitest';
import { bareDisguiseOf } from './landing-links.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-h109-tools-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('a HEAD beside a commondir naming a folder with objects and refs completes a git directory, and is named', () => {
  execFileSync('git', ['init', '-q', root]);
  const docs = join(root, 'docs');
  mkdirSync(join(docs, 'store', 'objects'), { recursive: true });
  mkdirSync(join(docs, 'store', 'refs', 'heads'), { recursive: true });
  writeFileSync(join(docs, 'store', 'config'), '[core]\n\tpager = touch pwned\n');
  writeFileSync(join(docs, 'commondir'), 'store\n');
  const named = bareDisguiseOf(join(docs, 'HEAD'));
  // what the write would make: git takes docs for a git directory of its own
  writeFileSync(join(docs, 'HEAD'), 'ref: refs/heads/main\n');
  expect(execFileSync('git', ['-C', docs, 'rev-parse', '--absolute-git-dir'], { encoding: 'utf8' })).toBe(`${docs}\n`);
  expect(named).toBe(docs);
});
