import { describe, expect, it } from 'vitest';
import { ReachInputError } from './errors.js';
import { landingRules, rulesOfEntry } from './landing-rules.js';
import { LANDING_TABLE, type LandingEntry, type LandingId, landingNames } from './landing-table.js';
import { judgeReach } from './judge.js';
import { matchesRule } from './match.js';
import { protectedLists } from './protected-lists.js';
import { resolveReach } from './reach.js';
import { sandboxPolicyAllows, sandboxPolicyOf } from './sandbox-policy-of.js';
import { toolchainCacheDirs } from './toolchain-caches.js';

const HOME = { linux: '/home/ada', darwin: '/Users/ada', win32: 'C:/Users/ada' } as const;
type Platform = keyof typeof HOME;
const input = (platform: Platform) => ({ platform, home: HOME[platform], self: `${HOME[platform]}/.aalis/self`, data: `${HOME[platform]}/.aalis`, userName: 'ada' });
// `~` the home, `@` the data directory; anything else is taken as it is.
const expand = (platform: Platform, t: string) => t.replace(/^~/, HOME[platform]).replace(/^@/, `${HOME[platform]}/.aalis`);

/** For every entry: a path it must cover and one it must not (on the entry's first platform, else linux). */
const EXAMPLES = {
  self: ['@/self/skills/x.md', '@/selfish'],
  'git-dir': ['/srv/p/.git', '/srv/p/.gitignore'],
  'git-hooks': ['/srv/p/.git/hooks/pre-commit', '/srv/p/.git/hooksx'],
  'git-config': ['/srv/p/.git/config', '/srv/p/.git/config.lock'],
  'git-config-worktree': ['/srv/p/.git/config.worktree', '/srv/p/.git/config.worktrees'],
  'git-commondir': ['/srv/p/.git/commondir', '/srv/p/commondir'],
  'git-modules': ['/srv/p/.git/modules/a/hooks/x', '/srv/p/modules/x'],
  'git-worktrees': ['/srv/p/.git/worktrees/wt1', '/srv/p/.git/worktrees/wt1/HEAD'],
  'git-worktree-config': ['/srv/p/.git/worktrees/wt1/commondir', '/srv/p/.git/worktrees/wt1/index'],
  'git-sequencer': ['/srv/p/.git/rebase-merge/git-rebase-todo', '/srv/p/.git/rebase-mergex'],
  'shell-startup': ['~/.zshrc', '/srv/p/.zshrc'],
  fish: ['~/.config/fish/conf.d/x.fish', '~/.config/fishy'],
  ssh: ['~/.ssh/authorized_keys', '/srv/p/.ssh/authorized_keys'],
  gitconfig: ['~/.gitconfig', '/srv/p/.gitconfig'],
  'git-xdg': ['~/.config/git/config', '~/.config/gitx'],
  'config-dir': ['~/.config', '~/.config/htop/htoprc'],
  'local-bin': ['~/.local/bin/git', '~/.local/lib/x'],
  'home-bin': ['~/bin/ls', '~/binary'],
  'launch-agents': ['~/Library/LaunchAgents/x.plist', '~/Library/Preferences/x.plist'],
  'library-dir': ['~/Library', '~/Library/Preferences'],
  'systemd-user': ['~/.config/systemd/user/x.service', '~/.config/systemd/other'],
  'systemd-dir': ['~/.config/systemd', '~/.config/systemd/other'],
  autostart: ['~/.config/autostart/x.desktop', '~/.config/autostarter'],
  vim: ['~/.vim/plugin/x.vim', '/srv/p/.vimrc'],
  'nvim-config': ['~/.config/nvim/init.lua', '~/.config/nvimx'],
  'nvim-data': ['~/.local/share/nvim/lazy/x/plugin/x.lua', '~/.local/share/other'],
  emacs: ['~/.emacs.d/init.el', '~/.emacs.bak'],
  'emacs-xdg': ['~/.config/doom/config.el', '~/.config/emacsx'],
  helix: ['~/.config/helix/languages.toml', '/srv/p/.config/helix/x'],
  'vscode-extensions': ['~/.vscode/extensions/x/ext.js', '~/.vscode/argv.json'],
  'vscode-user': ['~/.config/Code/User/settings.json', '~/.config/Code/logs/x'],
  'editor-home-dirs': ['~/.vscode-server', '~/.vscode-server/data/logs'],
  'editor-config-dirs': ['~/.config/Code', '~/.config/Code/logs'],
  'editor-home-dirs-mac': ['~/Library/Application Support/Cursor', '~/Library/Application Support/Cursor/logs'],
  'vscode-user-mac': ['~/Library/Application Support/Code/User/tasks.json', '~/Library/Application Support/Code/Cache/x'],
  npx: ['~/.npm/_npx/abc/node_modules/x/cli.js', '~/.npm/_cacache/x'],
  'npx-win': ['~/AppData/Local/npm-cache/_npx/abc/x.js', '~/AppData/Local/npm-cache/_cacache/x'],
  p10k: ['~/.cache/p10k-instant-prompt-bob.zsh', '~/.cache/pip/p10k-x'],
  'p10k-named': ['~/.cache/p10k-instant-prompt-ada.zsh', '~/.cache/p10k-instant-prompt-bob.zsh'],
  'p10k-named-zwc': ['~/.cache/p10k-instant-prompt-ada.zsh.zwc', '~/.cache/p10k-instant-prompt-ada.zsh.zw'],
  gitstatus: ['~/.cache/gitstatus/gitstatusd-linux-x86_64', '~/.cache/gitstatusx'],
  'zsh-plugin-caches': ['~/.cache/antidote/x/x.plugin.zsh', '~/.cache/pip/antidote'],
  'pre-commit-cache': ['~/.cache/pre-commit/repoabc/hook.py', '~/.cache/pre-commit-x'],
  corepack: ['~/.cache/node/corepack/v1/pnpm/9.99.0/bin/pnpm.cjs', '~/.cache/node/other'],
  'corepack-mac': ['~/Library/Caches/node/corepack/v1/pnpm/9.0.0/bin/pnpm.cjs', '~/Library/Caches/node/other'],
  'pnpm-cache': ['~/.cache/pnpm/dlx/abc/pkg/node_modules/.bin/x', '~/.cache/pnpm-x'],
  'pnpm-cache-mac': ['~/Library/Caches/pnpm/dlx/abc/x', '~/Library/Caches/pnpmx'],
  'go-build-cache': ['~/.cache/go-build/ab/abcdef-d', '~/.cache/go-buildx'],
  'go-build-cache-mac': ['~/Library/Caches/go-build/ab/abcdef-d', '~/Library/Caches/go-buildx'],
  'go-mod': ['~/go/pkg/mod/github.com/x/y@v1.2.3/main.go', '~/go/pkg/modx'],
  'uv-cache': ['~/.cache/uv/archive-v0/abc/bin/tool', '~/.cache/uvx'],
  'poetry-venvs': ['~/.cache/pypoetry/virtualenvs/x-py3.11/bin/python', '~/.cache/pypoetry/cache/x'],
  'poetry-venvs-mac': ['~/Library/Caches/pypoetry/virtualenvs/x/bin/python', '~/Library/Caches/pypoetry/cache/x'],
  'playwright-browsers': ['~/.cache/ms-playwright/chromium-1100/chrome-linux/chrome', '~/.cache/ms-playwrightx'],
  'playwright-browsers-mac': ['~/Library/Caches/ms-playwright/chromium-1100/x', '~/Library/Caches/ms-playwrightx'],
  'cargo-sources': ['~/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/build.rs', '~/.cargo/registry/cache/index.crates.io-6f17d22bba15001f/serde-1.0.0.crate'],
  'cargo-git-checkouts': ['~/.cargo/git/checkouts/x-abc/1234567/build.rs', '~/.cargo/git/db/x-abc/HEADx'],
  'maven-repository': ['~/.m2/repository/org/apache/maven/plugins/evil/1.0/evil-1.0.jar', '~/.m2/settings.xml'],
  'gradle-caches': ['~/.gradle/caches/modules-2/files-2.1/x/y/1.0/abc/y-1.0.jar', '~/.gradle/gradle.propertiesx'],
  'tool-startup': ['~/.tmux.conf', '~/.tmux/resurrect/last'],
  'cloud-credentials': ['~/.aws/config', '~/.aws/sso/cache/x.json'],
  'tool-startup-xdg': ['~/.config/tmux/tmux.conf', '~/.config/htop/htoprc'],
  'direnv-config': ['~/.config/direnv/lib/use_x.sh', '~/.config/direnvx'],
  'ipython-startup': ['~/.ipython/profile_default/startup/00-x.py', '~/.ipython/profile_default/history.sqlite'],
  'ipython-dirs': ['~/.ipython/profile_default', '~/.ipython/profile_default/log/x'],
  envrc: ['/srv/p/.envrc', '/srv/p/envrc'],
  'vscode-tasks': ['/srv/p/.vscode/tasks.json', '/srv/p/.vscode/launch.json'],
  'vscode-settings': ['/srv/p/.vscode/settings.json', '/srv/p/vscode/settings.json'],
  'code-workspace': ['/srv/p/app.code-workspace', '/srv/p/app.code-workspace.bak'],
  husky: ['/srv/p/.husky/_/h', '/srv/p/husky/x'],
  'pre-commit-config': ['/srv/p/.pre-commit-config.yaml', '/srv/p/.pre-commit-config.yml'],
  lefthook: ['/srv/p/.lefthook/pre-commit/lint.sh', '/srv/p/lefthook.md'],
  'lint-staged': ['/srv/p/.lintstagedrc.mjs', '/srv/p/lint-staged.md'],
  github: ['/srv/p/.github/workflows/ci.yml', '/srv/p/.github/dependabot.yml'],
  mise: ['/srv/p/.config/mise/config.toml', '/srv/p/mise.lock'],
  'tool-versions': ['/srv/p/.tool-versions', '/srv/p/.tool-versions.bak'],
  'cargo-config': ['/srv/p/.cargo/config.toml', '/srv/p/.cargo/registry/cache/x.crate'],
  devcontainer: ['/srv/p/.devcontainer/devcontainer.json', '/srv/p/devcontainer.json'],
  idea: ['/srv/p/.idea/workspace.xml', '/srv/p/idea/x'],
  'package-manager-rc': ['/srv/p/.pnpmfile.cjs', '/srv/p/pnpmfile.cjs'],
  'claude-settings': ['/srv/p/.claude/settings.local.json', '/srv/p/.claude/notes.md'],
  'claude-code': ['/srv/p/.claude/agents/x.md', '/srv/p/.claude/notes.md'],
  cursorrules: ['/srv/p/sub/.cursorrules', '/srv/p/cursorrules'],
  'editor-project-config': ['/srv/p/.zed/settings.json', '/srv/p/.zed/notes.md'],
  'rust-toolchain': ['/srv/p/rust-toolchain.toml', '/srv/p/rust-toolchain.md'],
  jj: ['/srv/p/.jj/repo/config.toml', '/srv/p/.jj/repo/store/x'],
  sapling: ['/srv/p/.sl/config', '/srv/p/.sl/store/x'],
  hg: ['/srv/p/.hg/hgrc', '/srv/p/.hg/store/data/x.i'],
  'aalis-config': ['/srv/p/sub/aalis.config.json', '/srv/p/aalis.config.json.bak'],
  mcp: ['/srv/p/.mcp.json', '/srv/p/mcp.json'],
  cursor: ['/srv/p/.cursor/rules/x.mdc', '/srv/p/.cursor/notes.txt'],
  codex: ['/srv/p/.codex/hooks/stop.sh', '/srv/p/.codex/sessions/x.jsonl'],
  gemini: ['/srv/p/.gemini/settings.json', '/srv/p/gemini/settings.json'],
  'agent-instructions': ['/srv/p/docs/CLAUDE.md', '/srv/p/README.md'],
  'tool-dirs': ['/srv/p/.github', '/srv/p/.github/ISSUE_TEMPLATE/bug.md'],
  'project-aalis': ['/srv/p/.aalis/plan.md', '@/plugins/x'],
} as const satisfies Record<LandingId, readonly [string, string]>;

const ENTRIES = LANDING_TABLE as readonly LandingEntry[];
const platformOf = (e: LandingEntry): Platform => (e.platforms?.[0] as Platform | undefined) ?? 'linux';
const covers = (e: LandingEntry, path: string) => {
  const platform = platformOf(e);
  return rulesOfEntry(e, input(platform)).some((r) => matchesRule(r, expand(platform, path), platform));
};

describe('the landing table', () => {
  it('has unique ids, a reason and a tool for every entry, and examples for each', () => {
    const ids = ENTRIES.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of ENTRIES) {
      expect(e.reason.length, e.id).toBeGreaterThan(5);
      expect(e.tool.length, e.id).toBeGreaterThan(1);
    }
    expect(Object.keys(EXAMPLES).sort()).toEqual([...ids].sort());
  });

  it.each(ENTRIES.map((e) => [e.id, ...EXAMPLES[e.id as LandingId]] as const))('%s covers %s, not %s', (id, yes, no) => {
    const e = ENTRIES.find((x) => x.id === id)!;
    expect(covers(e, yes)).toBe(true);
    expect(covers(e, no)).toBe(false);
  });

  // mise reads config from its directories too: a symlink or a rename named like one (`ln -s d
  // .mise`) brought a prepared config in whole, and conf.d/ was not covered at all
  it.each([
    ['/srv/p/.mise', true],
    ['/srv/p/mise', true],
    ['/srv/p/.config/mise', true],
    ['/srv/p/.mise/config.toml', true],
    ['/srv/p/mise/config.local.toml', true],
    ['/srv/p/.config/mise/config.toml', true],
    ['/srv/p/.config/mise/conf.d/evil.toml', true],
    ['/srv/p/.mise/conf.d/x.toml', true],
    ['/srv/p/.config/mise.toml', true],
    ['/srv/p/mise.production.toml', true],
    ['/srv/p/src/mise/readme.md', false],
    ['/srv/p/mise.lock', false],
  ])('mise covers %s: %s', (path, yes) => {
    expect(covers(ENTRIES.find((x) => x.id === 'mise')!, path)).toBe(yes);
  });

  it.each(ENTRIES.flatMap((e) => (e.names ?? []).map((n) => [e.id, n] as const)))('%s: its placeholder name %s is covered where it is placed', (id, name) => {
    const e = ENTRIES.find((x) => x.id === id)!;
    const dir = 'anywhere' in e.place ? '/srv/p' : '~';
    expect(covers(e, `${dir}/${name}`)).toBe(true);
  });

  it('gives the placeholder names once each, in table order', () => {
    const names = landingNames();
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['.git/hooks', '.envrc', 'CLAUDE.md', '.gemini', '.devcontainer', '.idea', 'lefthook.yml', 'mise.toml', '.mise.toml', '.github/workflows']));
  });

  it('leaves out the entries named after the user when the name is unknown or not a plain name', () => {
    const e = ENTRIES.find((x) => x.id === 'p10k-named')!;
    const { userName: _, ...noUser } = input('linux');
    expect(rulesOfEntry(e, noUser)).toEqual([]);
    expect(rulesOfEntry(e, { ...noUser, userName: '../x' })).toEqual([]);
  });
});

describe('extra landings from configuration', () => {
  const base = input('linux');
  it('are added after the table, paths and patterns', () => {
    const rules = landingRules({ ...base, extra: [{ path: '/srv/tools/bin', reason: 'on PATH' }, { pattern: '^.*/\\.taskfile\\.ya?ml$' }] });
    const covered = (p: string) => rules.some((r) => matchesRule(r, p, 'linux'));
    expect(covered('/srv/tools/bin/make')).toBe(true);
    expect(covered('/srv/p/.taskfile.yml')).toBe(true);
    expect(covered('/srv/p/taskfile.yml')).toBe(false);
  });

  it.each([
    [{ path: 'bin' }, /landings\[0\] is refused: landings\[0\] 'bin' is not an absolute path.*'landings' config/],
    [{ pattern: '(?=x)' }, /landings\[0\] is refused: the path pattern '\(\?=x\)' is refused: the group '\(\?=' .*'landings' config/],
    [{ pattern: '^/a$/b' }, /landings\[0\] is refused: the landing pattern '\^\/a\$\/b' has an anchor/],
  ])('refuses %j with a clear error', (extra, message) => {
    expect(() => landingRules({ ...base, extra: [extra] })).toThrow(ReachInputError);
    expect(() => landingRules({ ...base, extra: [extra] })).toThrow(message);
  });
});

describe('the tool boundary and the sandbox agree on every landing of the table', () => {
  // `aalis explain` answers with judgeReach; the sandbox enforces sandboxPolicyOf. With the
  // workspace at home (every example under a writable root), each covered example asks at the
  // boundary and is not writable in the sandbox, and each uncovered one in the workspace is writable.
  const D = '/home/ada/.aalis';
  const PATHS = { install: '/opt/aalis', data: D, workspace: `${D}/workspace`, tmp: `${D}/tmp`, self: `${D}/self`, logs: `${D}/logs`, config: `${D}/config.yaml`, secrets: `${D}/secrets.yaml` };
  const lists = protectedLists({
    paths: PATHS,
    userHome: HOME.linux,
    platform: 'linux',
    form: 'npm',
    codeDirs: [],
    userName: 'ada',
  });
  const reach = resolveReach({
    principal: 'owner',
    tier: 'workspace',
    onBoundary: 'ask',
    place: { home: HOME.linux },
    gitDirs: [],
    sessionTmp: '/home/ada/.aalis/tmp/s1',
    localPorts: [],
    lists,
    paths: PATHS,
    toolchainCaches: toolchainCacheDirs(HOME.linux, 'linux'),
  });
  const policy = sandboxPolicyOf(reach);
  const linuxEntries = ENTRIES.filter((e) => platformOf(e) === 'linux');
  it.each(linuxEntries.map((e) => [e.id, expand('linux', EXAMPLES[e.id as LandingId][0]).replace(/^\/srv\/p/, '/home/ada/p')] as const))('%s: %s asks and is not writable in the sandbox', (_id, path) => {
    expect(judgeReach(reach, { effect: 'write', path })).toEqual({ verdict: 'ask', reason: { kind: 'landing' } });
    expect(sandboxPolicyAllows(policy, 'write', path, 'linux')).toBe(false);
  });
});

// A landing is read by a tool through every folder on its way: a symlink made at one of those
// names (`ln -s docs .cargo` beside an ordinary docs/config.toml) moves the landing onto an
// ordinary file, judged by its own name (found by an attack, h104: `.cargo` was not a landing,
// `.cargo/config.toml` was). So every folder on the way to a landing is a landing itself.
describe('every folder on the way to a landing is a landing', () => {
  const FREE_FOLDERS = new Set(['docs', 'sub']);
  const folders = (platform: Platform, path: string, base: string): string[] => {
    const full = expand(platform, path);
    if (!full.startsWith(`${base}/`)) return [];
    const names = full.slice(base.length + 1).split('/');
    // `docs/CLAUDE.md`, `sub/.cursorrules`: a folder of any name, where the landing is anywhere
    return names.slice(0, -1).flatMap((n, i) => (FREE_FOLDERS.has(n) ? [] : [`${base}/${names.slice(0, i + 1).join('/')}`]));
  };
  const coveredByAny = (path: string, platform: Platform) => ENTRIES.some((e) => (e.platforms === undefined || e.platforms.includes(platform)) && rulesOfEntry(e, input(platform)).some((r) => matchesRule(r, path, platform)));
  const cases = ENTRIES.flatMap((e) => {
    const platform = platformOf(e);
    const yes = EXAMPLES[e.id as LandingId][0];
    return folders(platform, yes, '/srv/p').map((f) => [e.id, f, platform] as const);
  });
  it.each(cases)('%s: %s', (_id, folder, platform) => {
    expect(coveredByAny(folder, platform)).toBe(true);
  });
  // in the home too (h106: `~/.config/Code -> ~/x` with the workspace at home): a folder on the way
  // is a landing, or a name the policy protects (`{ path }`) lies under it, which the commit's
  // `shadowed` and the host tools' `protectedPathsUnder` take a symlink or a move there for
  const namedUnder = (folder: string, platform: Platform) =>
    ENTRIES.some((e) => (e.platforms === undefined || e.platforms.includes(platform)) && rulesOfEntry(e, input(platform)).some((r) => 'path' in r && r.path.startsWith(`${folder}/`)));
  const homeCases = ENTRIES.flatMap((e) => {
    const platform = platformOf(e);
    if (platform === 'win32') return [];
    return folders(platform, EXAMPLES[e.id as LandingId][0], HOME[platform]).map((f) => [e.id, f, platform] as const);
  });
  it.each(homeCases)('in the home, %s: %s', (_id, folder, platform) => {
    expect(coveredByAny(folder, platform) || namedUnder(folder, platform)).toBe(true);
  });
});

// Tools that follow the XDG base directory spec look under $XDG_CONFIG_HOME (…_CACHE_, _DATA_)
// when it is set: every landing under a home default is a landing under the set directory too
// (h108 found git's; nvim, fish, direnv, systemd, p10k, … are the same class).
describe('landings where the XDG base directories are set', () => {
  const XDG = { config: ['/srv/dots/config'], cache: ['/srv/dots/cache'], data: ['/srv/dots/share'], state: ['/srv/dots/state'] } as const;
  const PREFIX = [['~/.config', XDG.config[0]], ['~/.cache', XDG.cache[0]], ['~/.local/share', XDG.data[0]]] as const;
  const moved = (path: string): string | undefined => {
    for (const [home, set] of PREFIX) if (path === home || path.startsWith(`${home}/`)) return set + path.slice(home.length);
    return undefined;
  };
  const cases = ENTRIES.filter((e) => platformOf(e) !== 'win32').flatMap((e) => {
    const there = moved(EXAMPLES[e.id as LandingId][0]);
    return there === undefined ? [] : [[e.id, there, platformOf(e)] as const];
  });
  it('covers every entry under a home default (the table has such entries)', () => {
    expect(cases.length).toBeGreaterThan(20);
  });
  it.each(cases)('%s: %s', (id, there, platform) => {
    const entry = ENTRIES.find((e) => e.id === id)!;
    const home = EXAMPLES[id as LandingId][0].replace(/^~/, HOME[platform]);
    const withXdg = rulesOfEntry(entry, { ...input(platform), xdg: XDG });
    expect(withXdg.some((r) => matchesRule(r, there, platform))).toBe(true);
    expect(withXdg.some((r) => matchesRule(r, home, platform))).toBe(true); // the home default stays a landing
    expect(rulesOfEntry(entry, input(platform)).some((r) => matchesRule(r, there, platform))).toBe(false);
  });
  it('adds nothing where a base directory is set to its default', () => {
    const entry = ENTRIES.find((e) => e.id === 'nvim-config')!;
    expect(rulesOfEntry(entry, { ...input('linux'), xdg: { config: [`${HOME.linux}/.config`] } })).toEqual(rulesOfEntry(entry, input('linux')));
  });
  it('denies reading the credentials and browser profiles under $XDG_CONFIG_HOME, and says which path is not absolute', () => {
    const D = `${HOME.linux}/.aalis`;
    const paths = { install: '/opt/aalis', data: D, workspace: `${D}/workspace`, tmp: `${D}/tmp`, self: `${D}/self`, logs: `${D}/logs`, config: `${D}/config.yaml`, secrets: `${D}/secrets.yaml` };
    const base = { paths, userHome: HOME.linux, platform: 'linux' as const, form: 'npm' as const, codeDirs: [], userName: 'ada' };
    const lists = protectedLists({ ...base, xdg: { config: XDG.config } });
    for (const p of [`${XDG.config[0]}/gh/hosts.yml`, `${XDG.config[0]}/google-chrome/Default/Cookies`]) expect(lists.denyRead.some((r) => matchesRule(r, p, 'linux')), p).toBe(true);
    expect(protectedLists(base).denyRead.some((r) => matchesRule(r, `${XDG.config[0]}/gh/hosts.yml`, 'linux'))).toBe(false);
    expect(() => protectedLists({ ...base, xdg: { config: ['dots/config'] } })).toThrow(/xdg\.config/);
    // a set directory that is a symlink: its literal path and its real one are both given, both landings
    const linked = protectedLists({ ...base, xdg: { config: ['/srv/p/cfg', '/srv/dots/config'] } });
    for (const p of ['/srv/p/cfg/nvim/init.lua', '/srv/dots/config/nvim/init.lua', '/srv/p/cfg']) expect(linked.landing.some((r) => matchesRule(r, p, 'linux')), p).toBe(true);
    // pnpm's store (the same inodes as the daemon's node_modules) where $XDG_DATA_HOME puts it: control plane
    expect(protectedLists({ ...base, xdg: { data: XDG.data } }).control.some((r) => matchesRule(r, `${XDG.data[0]}/pnpm/store/v10/files/00/abc`, 'linux'))).toBe(true);
    expect(protectedLists(base).control.some((r) => matchesRule(r, `${XDG.data[0]}/pnpm/store/v10/files/00/abc`, 'linux'))).toBe(false);
  });
});
