import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expandHome, gitConfigProgramWords, gitConfigValues, parseGitConfig } from './git-config.js';

const root = mkdtempSync(join(tmpdir(), 'aalis-gitconfig-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('parseGitConfig', () => {
  it.each<[string, string, string | undefined]>([
    ['[core]\n\thooksPath = .githooks', 'core.hookspath', '.githooks'],
    ['[CORE]\n\tHooksPath=x', 'core.hookspath', 'x'],
    ['[core] hooksPath = same-line', 'core.hookspath', 'same-line'],
    ['[core]\n  hooksPath = "with space/and \\"quote\\"" # comment', 'core.hookspath', 'with space/and "quote"'],
    ['[core]\n  hooksPath = plain ; comment', 'core.hookspath', 'plain'],
    ['[core]\n  hooksPath = a\\\nb', 'core.hookspath', 'ab'],
    ['[core]\n  bare', 'core.bare', undefined],
    // git ends a comment at its newline, a backslash there or not (found by an attack, h115 V3)
    ['[core]\n\t# hooks: see docs \\\n\thooksPath = hk', 'core.hookspath', 'hk'],
    ['[core]\n\t; hooks \\\n\thooksPath = hk', 'core.hookspath', 'hk'],
    ['[core]\n\tbare = true # note \\\n\thooksPath = hk', 'core.hookspath', 'hk'],
    ['[core]\n\tbare = true ; note \\\n\thooksPath = hk', 'core.bare', 'true'],
    ['[core] # note \\\n\thooksPath = hk', 'core.hookspath', 'hk'],
    // a value line's backslash goes on, in quotes or not
    ['[core]\n  hooksPath = "a\\\nb"', 'core.hookspath', 'ab'],
    ['[core]\n  hooksPath = "a#\\\nb"', 'core.hookspath', 'a#b'],
  ])('%j gives %s = %s', (text, name, value) => {
    const [section, key] = name.split('.');
    const entry = parseGitConfig(text).find((e) => e.section === section && e.key === key);
    expect(entry).toBeDefined();
    expect(entry?.value).toBe(value);
  });

  it('keeps subsections apart from the section itself', () => {
    const entries = parseGitConfig('[core "x"]\nhooksPath = no\n[core.y]\nhooksPath = no2\n[core]\nhooksPath = yes');
    expect(entries.filter((e) => e.subsection === undefined).map((e) => e.value)).toEqual(['yes']);
  });
});

describe('gitConfigValues', () => {
  it('follows include and includeIf paths, relative and from the home, whatever the condition', () => {
    const home = join(root, 'home');
    mkdirSync(join(home, 'conf.d'), { recursive: true });
    writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = conf.d/a\n[includeIf "gitdir:~/never/"]\n\tpath = ~/conf.d/b\n[core]\n\thooksPath = /top\n');
    writeFileSync(join(home, 'conf.d', 'a'), '[core]\n\thooksPath = /from-a\n[include]\n\tpath = a\n'); // includes itself: the depth limit stops it
    writeFileSync(join(home, 'conf.d', 'b'), '[core]\n\thooksPath = ~/from-b\n');
    const values = gitConfigValues(join(home, '.gitconfig'), 'core', 'hookspath', home);
    expect(values[0]).toBe('/from-a');
    expect(values).toContain('~/from-b');
    expect(values.at(-1)).toBe('/top');
    expect(values.filter((v) => v === '/from-a')).toHaveLength(10);
  });

  it('is empty for a file that cannot be read', () => {
    expect(gitConfigValues(join(root, 'missing'), 'core', 'hookspath', root)).toEqual([]);
  });
});

describe('expandHome', () => {
  // found by an attack (h106): `core.hooksPath = ~alice/hooks` was taken as a relative name
  it.each([
    ['~', '/home/me'],
    ['~/hooks', '/home/me/hooks'],
    ['~root/hooks', '/root/hooks'],
    ['~root', '/root'],
    ['~no-such-user-aalis/hooks', '~no-such-user-aalis/hooks'],
    ['hooks', 'hooks'],
  ])('%s is %s', (path, expanded) => {
    expect(expandHome(path, '/home/me')).toBe(expanded);
  });
});

describe('gitConfigProgramWords', () => {
  it.each<[string, string[]]>([
    ['[core]\n\tfsmonitor = tools/fsmon.sh', ['tools/fsmon.sh']],
    ['[alias]\n\tst = !python3 tools/st.py --fast', ['tools/st.py']],
    ['[alias]\n\tlog1 = log --oneline', []],
    // a folder the program works on is not one it runs (found by an attack, h112: all of src/ refused)
    ['[alias]\n\tfmt = !prettier --write src/ docs/', []],
    // a folder it runs in holds what it runs (h114)
    ['[alias]\n\tx = !cd tools/ && ./run.sh', ['tools/', './run.sh']],
    ['[alias]\n\tb = !make -C build/', ['build/']],
    ['[alias]\n\tfetchx = !curl https://x.example/a/b', []],
    // a path glued to shell syntax is a word of its own (found by an attack, h115 G1-G3)
    ['[alias]\n\tst = "!f() { tools/st.sh; }; f"', ['tools/st.sh']],
    ['[alias]\n\tst = !tools/st.sh>/dev/null', ['tools/st.sh']],
    ['[alias]\n\tst = !tools/st.sh 2>&1|less', ['tools/st.sh']],
    ['[alias]\n\tst = "!(tools/a.sh&&tools/b.sh)<in.txt"', ['tools/a.sh', 'tools/b.sh']],
    ['[alias]\n\tst = "!\\"$(git rev-parse --show-toplevel)\\"/tools/st.sh"', ['./tools/st.sh']],
    ['[alias]\n\tst = !cd "$(git rev-parse --show-toplevel)" && tools/st.sh', ['tools/st.sh']],
    ['[alias]\n\tst = !$PWD/tools/st.sh', ['./tools/st.sh']],
    ['[alias]\n\tst = !$HOME/bin/st.sh', ['~/bin/st.sh']],
    ['[alias]\n\tst = "!sh -c \'tools/st.sh --fast\'"', ['tools/st.sh']],
    ['[alias]\n\tst = !echo $(tools/gen.sh) `tools/gen2.sh`', ['tools/gen.sh', 'tools/gen2.sh']],
    ['[alias]\n\tst = !FOO=tools/x.sh run', ['tools/x.sh']],
    // an expansion that cannot be told, in a path: the repository's top (protected whole)
    ['[alias]\n\tst = !$ROOT/tools/st.sh', ['.']],
    ['[alias]\n\tst = "!\\"$(dirname $0)\\"/tools/st.sh"', ['.']],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: config text, not a template
    ['[core]\n\tfsmonitor = ${TOOLS}/fsmon.sh', ['.']],
    // everyday aliases that name no path
    ['[alias]\n\tst = "!f() { git status \\"$@\\"; }; f"', []],
    ['[alias]\n\ted = !$EDITOR $(git diff --name-only)', []],
    ['[alias]\n\troot = !pwd', []],
  ])('%j names %j', (text, words) => {
    expect(gitConfigProgramWords(parseGitConfig(text))).toEqual(words);
  });
});
