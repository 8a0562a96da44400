import { describe, expect, it } from 'vitest';
import { groupHidden } from './hidden-groups.js';
import type { FoundEntry } from './scan.js';

const layers = { entry: (p: string) => (/\/\.env[^/]*$/.test(p) ? 'hidden' : 'ro') };
const file = (path: string): FoundEntry => ({ path, kind: 'file' });
const envs = (dirs: string[], names: string[]) => dirs.flatMap((d) => names.map((n) => file(`${d}/${n}`)));

describe('groupHidden', () => {
  it.each([
    ['under the cap: unchanged', envs(['/w/a', '/w/b'], ['.env']), 4, ['/w/a/.env', '/w/b/.env']],
    ['two in a directory: the directory instead', envs(['/w/a', '/w/b'], ['.env', '.env.x']), 2, ['/w/a', '/w/b']],
    ['each alone in its directory: nothing groups', envs(['/w/n/a', '/w/n/b', '/w/n/c'], ['.env']), 1, ['/w/n/a/.env', '/w/n/b/.env', '/w/n/c/.env']],
    ['never the cwd or a root', envs(['/w'], ['.env', '.env.x', '.env.y']), 1, ['/w/.env', '/w/.env.x', '/w/.env.y']],
    ['landings are not hidden, so they never group', [file('/w/a/AGENTS.md'), file('/w/a/.envrc.x'), file('/w/a/.env')], 0, ['/w/a/AGENTS.md', '/w/a']],
  ])('%s', (_, found, cap, paths) => {
    expect(groupHidden(found, layers, ['/w'], cap).map((f) => f.path).sort()).toEqual([...paths].sort());
  });
});
