import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReachInputError } from './errors.js';
import { compileRules, matchesRule, preparePath } from './match.js';
import { escapePattern } from './path.js';
import { protectedLists } from './protected-lists.js';
import { nodeModulesException } from './node-modules-exception.js';
import { gitDirLandings } from './reach.js';
import type { PathMatcher, PathRule } from './rule.js';

describe('matchesRule', () => {
  it.each<[string, PathRule, string, NodeJS.Platform, boolean]>([
    ['root itself', { path: '/a/b' }, '/a/b', 'linux', true],
    ['under the root', { path: '/a/b' }, '/a/b/c/d', 'linux', true],
    ['a sibling sharing a prefix', { path: '/a/b' }, '/a/bc', 'linux', false],
    ['the parent', { path: '/a/b' }, '/a', 'linux', false],
    ['root of the file system', { path: '/' }, '/etc/passwd', 'linux', true],
    ['trailing slash on the path', { path: '/a/b' }, '/a/b/', 'linux', true],
    ['trailing slash on the root', { path: '/a/b/' }, '/a/b', 'linux', true],
    ['doubled slash cannot dodge a root', { path: '/etc' }, '//etc/passwd', 'linux', true],
    ['case counts on linux', { path: '/a/B' }, '/a/b', 'linux', false],
    ['case folds on darwin', { path: '/Users/X/.SSH' }, '/users/x/.ssh/id_rsa', 'darwin', true],
    ['case folds on win32', { path: 'C:/Users/X' }, 'c:/users/x/y', 'win32', true],
    ['backslashes are slashes on win32', { path: 'C:\\Users\\x' }, 'C:/Users/x/.ssh', 'win32', true],
    ['backslashes are slashes on win32 (path)', { path: 'C:/Users/x' }, 'C:\\Users\\x\\.ssh', 'win32', true],
    ['backslash is a name character on linux', { path: '/a' }, '/a\\b', 'linux', false],
    ['a name with a backslash is a root on linux', { path: '/a\\b' }, '/a\\b/c', 'linux', true],
    ['pattern over the whole path', { pattern: '.*/\\.git' }, '/r/.git', 'linux', true],
    ['pattern must match all of it', { pattern: '.*/\\.git' }, '/r/.git/objects', 'linux', false],
    ['pattern matches across newlines', { pattern: '^.*/\\.git$' }, '/r\n/.git', 'linux', true],
    ['pattern folds on darwin', { pattern: '^.*/\\.git$' }, '/r/.GIT', 'darwin', true],
    ['pattern does not fold on linux', { pattern: '^.*/\\.git$' }, '/r/.GIT', 'linux', false],
    ['pattern sees slashes on win32', { pattern: '^.*/\\.git$' }, 'C:\\r\\.git', 'win32', true],
    ['except carves out', { path: '/d', except: [{ path: '/d/ws' }] }, '/d/ws/x', 'linux', false],
    ['except only its subtree', { path: '/d', except: [{ path: '/d/ws' }] }, '/d/wsx', 'linux', true],
    ['except by pattern', { pattern: '^.*/\\.env[^/]*$', except: [{ pattern: '^.*/\\.env\\.example$' }] }, '/p/.env.example', 'linux', false],
    ['except by pattern, other names', { pattern: '^.*/\\.env[^/]*$', except: [{ pattern: '^.*/\\.env\\.example$' }] }, '/p/.env.local', 'linux', true],
    ['except folds on darwin', { path: '/d', except: [{ path: '/D/WS' }] }, '/d/ws/x', 'darwin', false],
  ])('%s', (_name, rule, path, platform, expected) => {
    expect(matchesRule(rule, path, platform)).toBe(expected);
  });

  it('refuses relative and unresolved paths', () => {
    expect(() => matchesRule({ path: '/a' }, 'a/b', 'linux')).toThrow(ReachInputError);
    expect(() => matchesRule({ path: '/a' }, '/a/../etc', 'linux')).toThrow(/'\.\.' segments/);
    expect(() => matchesRule({ path: 'a' }, '/a', 'linux')).toThrow(/not an absolute path/);
    expect(() => matchesRule({ path: '/a' }, '/a', 'win32')).toThrow(/not an absolute path/);
  });

  it('refuses a pattern outside the allowed subset', () => {
    expect(() => matchesRule({ pattern: '^\\w+$' }, '/a', 'linux')).toThrow(/escape \\w/);
  });

  it('compiled rules and single rules agree', () => {
    const rules: PathRule[] = [
      { path: '/x' },
      { pattern: '^.*/\\.git$' },
      { pattern: '^.*/a|^/b$' },
      { pattern: '^/y/.*\\$' + '$' },
      { path: '/d', except: [{ path: '/d/w' }] },
    ];
    const compiled = compileRules(rules, 'linux');
    for (const p of ['/x/1', '/r/.git', '/q/a', '/b', '/z/b', '/y/k$', '/y/k', '/d/1', '/d/w/1', '/e']) {
      expect(compiled.test(preparePath(p, 'linux'))).toBe(rules.some((r) => matchesRule(r, p, 'linux')));
    }
  });
});

const segment = fc.stringMatching(/^[A-Za-z0-9._-]{1,8}$/).filter((s) => s !== '.' && s !== '..');
const segments = fc.array(segment, { minLength: 1, maxLength: 5 });
const posix = (segs: readonly string[]) => `/${segs.join('/')}`;
const folding = fc.constantFrom<NodeJS.Platform>('darwin', 'win32');
const anyPlatform = fc.constantFrom<NodeJS.Platform>('linux', 'darwin', 'win32');
const rooted = (platform: NodeJS.Platform, segs: readonly string[]) => (platform === 'win32' ? `C:${posix(segs)}` : posix(segs));

describe('matchesRule properties', () => {
  it('a root covers itself and everything under it', () => {
    fc.assert(
      fc.property(anyPlatform, segments, segments, (platform, root, rest) => {
        expect(matchesRule({ path: rooted(platform, root) }, rooted(platform, root), platform)).toBe(true);
        expect(matchesRule({ path: rooted(platform, root) }, rooted(platform, [...root, ...rest]), platform)).toBe(true);
      }),
    );
  });

  it('a root never covers a sibling that merely shares its prefix', () => {
    fc.assert(
      fc.property(anyPlatform, segments, segment, (platform, root, suffix) => {
        const r = rooted(platform, root);
        expect(matchesRule({ path: r }, r + suffix, platform)).toBe(false);
        expect(matchesRule({ pattern: `^${escapePattern(r)}(/.*)?$` }, r + suffix, platform)).toBe(false);
      }),
    );
  });

  it('trailing slashes on either side do not change the answer', () => {
    fc.assert(
      fc.property(anyPlatform, segments, segments, fc.integer({ min: 1, max: 3 }), (platform, a, b, n) => {
        const slashes = '/'.repeat(n);
        const expected = matchesRule({ path: rooted(platform, a) }, rooted(platform, b), platform);
        expect(matchesRule({ path: rooted(platform, a) + slashes }, rooted(platform, b), platform)).toBe(expected);
        expect(matchesRule({ path: rooted(platform, a) }, rooted(platform, b) + slashes, platform)).toBe(expected);
      }),
    );
  });

  it('case folds on darwin and win32 and nowhere else', () => {
    const withLetter = segments.filter((s) => s.some((x) => /[a-z]/.test(x)));
    fc.assert(
      fc.property(withLetter, folding, (segs, platform) => {
        const lower = rooted(platform, segs.map((s) => s.toLowerCase()));
        const upper = rooted(platform, segs.map((s) => s.toUpperCase()));
        expect(matchesRule({ path: lower }, upper, platform)).toBe(true);
        expect(matchesRule({ pattern: escapePattern(lower) }, upper, platform)).toBe(true);
        expect(matchesRule({ path: posix(segs.map((s) => s.toLowerCase())) }, posix(segs.map((s) => s.toUpperCase())), 'linux')).toBe(false);
        expect(matchesRule({ pattern: escapePattern(posix(segs.map((s) => s.toLowerCase()))) }, posix(segs.map((s) => s.toUpperCase())), 'linux')).toBe(false);
      }),
    );
  });

  it('backslashes separate only on win32', () => {
    fc.assert(
      fc.property(segments, segments, (root, rest) => {
        const back = `C:\\${[...root, ...rest].join('\\')}`;
        expect(matchesRule({ path: `C:/${root.join('/')}` }, back, 'win32')).toBe(true);
        const linuxPath = `/${root.join('\\')}\\${rest.join('\\')}`;
        const linuxRoot = `/${root.join('/')}`;
        // On linux `\` is part of a name: the whole thing is one segment beside the root.
        expect(matchesRule({ path: linuxRoot }, linuxPath, 'linux')).toBe(false);
      }),
    );
  });

  it('except always wins inside its rule', () => {
    fc.assert(
      fc.property(anyPlatform, segments, segments, segments, fc.boolean(), (platform, root, mid, rest, asPattern) => {
        const r = rooted(platform, root);
        const carved = rooted(platform, [...root, ...mid]);
        const except = asPattern ? { pattern: `^${escapePattern(carved)}(/.*)?$` } : { path: carved };
        const rule: PathRule = { path: r, except: [except] };
        expect(matchesRule(rule, rooted(platform, [...root, ...mid, ...rest]), platform)).toBe(false);
        expect(matchesRule(rule, carved, platform)).toBe(false);
      }),
    );
  });
});

/** An independent reference: each rule by the words of the contract, no merging, no trie. */
function reference(rules: readonly PathRule[], path: string, platform: NodeJS.Platform): boolean {
  const fold = platform === 'darwin' || platform === 'win32';
  const norm = (s: string) => {
    let x = platform === 'win32' ? s.replaceAll('\\', '/') : s;
    x = x.replace(/\/+/g, '/');
    if (x.length > 1) x = x.replace(/\/+$/, '');
    return x;
  };
  const covers = (m: PathMatcher) => {
    if ('path' in m) {
      const a = fold ? norm(path).toLowerCase() : norm(path);
      const r = fold ? norm(m.path).toLowerCase() : norm(m.path);
      return a === r || a.startsWith(r === '/' ? '/' : `${r}/`);
    }
    return new RegExp(`^(?:${m.pattern})$`, fold ? 'isu' : 'su').test(norm(path));
  };
  return rules.some((r) => covers(r) && !(r.except ?? []).some(covers));
}

describe('compiled lists agree with the contract, rule by rule', () => {
  const words = ['home', 'ada', '.aalis', 'workspace', 'tmp', 's1', 'self', '.git', 'hooks', 'HEAD', 'modules', 'worktrees', 'config', 'commondir', '.env', '.env.local', '.env.example', 'node_modules', 'dist', 'packages', 'src', 'aalis', '.ssh', '.config', 'git', 'fish', '.vscode', 'tasks.json', 'AGENTS.md', 'x'];
  const word = fc.constantFrom(...words);
  const paths = fc.array(word, { minLength: 1, maxLength: 7 }).map((s) => `/${s.join('/')}`);
  it.each(['linux', 'darwin'] as const)('on %s', (platform) => {
    const lists = protectedLists({
      paths: {
        install: '/home/ada/src/aalis',
        data: '/home/ada/.aalis',
        workspace: '/home/ada/.aalis/workspace',
        tmp: '/home/ada/.aalis/tmp',
        self: '/home/ada/.aalis/self',
        logs: '/home/ada/.aalis/logs',
        config: '/home/ada/.aalis/config',
        secrets: '/home/ada/.aalis/secrets.yaml',
      },
      userHome: '/home/ada',
      platform,
      form: 'source',
      codeDirs: ['/home/ada/x'],
    });
    // with the node_modules exception as a rule of its own: its carve-out of the landings above a
    // node_modules is a pattern long enough to be compiled apart, and looked for by its literal first
    const exception = nodeModulesException(['/home/ada/.aalis/workspace', '/home/ada/.aalis/tmp/s1'], lists.landing, platform)!;
    const long = exception.except!.flatMap((m) => ('pattern' in m && m.pattern.length >= 512 ? [{ pattern: m.pattern }] : []));
    expect(long.length).toBeGreaterThan(0);
    const all: PathRule[] = [...lists.control, ...lists.landing, ...lists.denyRead, ...gitDirLandings(['/home/ada/src/aalis/.git', '/home/ada/x']), exception, ...long];
    const compiled = compileRules(all, platform);
    const cased = fc.tuple(paths, fc.boolean()).map(([p, up]) => (up && platform === 'darwin' ? p.toUpperCase() : p));
    fc.assert(
      fc.property(cased, (path) => {
        expect(compiled.test(preparePath(path, platform))).toBe(reference(all, path, platform));
      }),
      { numRuns: 2000 },
    );
  });
});
