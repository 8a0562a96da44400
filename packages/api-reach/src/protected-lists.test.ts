import { describe, expect, it } from 'vitest';
import type { HostPaths } from './host-paths.js';
import type { ProtectedLists } from './lists.js';
import { matchesRule } from './match.js';
import { protectedLists } from './protected-lists.js';

type ListName = 'control' | 'landing' | 'denyRead';

const inList = (lists: ProtectedLists, name: ListName, path: string) => lists[name].some((r) => matchesRule(r, path, lists.platform));

function hostPaths(data: string, install: string, deployment?: string): HostPaths {
  return {
    install,
    data,
    workspace: `${data}/workspace`,
    tmp: `${data}/tmp`,
    self: `${data}/self`,
    logs: `${data}/logs`,
    config: `${data}/config.yaml`,
    secrets: `${data}/secrets.yaml`,
    ...(deployment === undefined ? {} : { deployment }),
  };
}

const fixtures = {
  linux: { home: '/home/ada', install: '/opt/aalis' },
  darwin: { home: '/Users/ada', install: '/Users/ada/src/aalis' },
} as const;

function listsFor(platform: 'linux' | 'darwin', form: 'source' | 'npm' = 'source', otherHomes: readonly string[] = []): ProtectedLists {
  const { home, install } = fixtures[platform];
  return protectedLists({
    otherHomes,
    paths: hostPaths(`${home}/.aalis`, install),
    userHome: home,
    platform,
    form,
    codeDirs: [`${home}/plugins/linked`],
    entry: `${install}/bin/aalis.cjs`,
    stateDir: `${home}/.local/state/aalis`,
  });
}

// `~` the user's home, `@` the data directory (`~/.aalis`), `%` the install.
type Case = readonly [ListName, string, boolean, ('linux' | 'darwin')?];
const CASES: readonly Case[] = [
  // control plane: the data directory minus workspace, tmp and self/
  ['control', '@/plugins/reach/state.json', true],
  ['control', '@/config.yaml', true],
  ['control', '@/secrets.yaml', true],
  ['control', '@/logs/daemon.log', true],
  ['control', '@/run/daemon.pid', true],
  ['control', '@/cache/x', true],
  ['control', '@', true],
  ['control', '@/workspace/proj/a.ts', false],
  ['control', '@/workspace', false],
  ['control', '@/tmp/s1/out.txt', false],
  ['control', '@/self/persona.md', false],
  ['control', '@/self', false],
  ['control', '@/selfish', true],
  // control plane and hidden: the daemon's state outside the data directory (the registry, the undone folder)
  ['control', '~/.local/state/aalis/daemons/0123.json', true],
  ['control', '~/.local/state/aalis/undone/run-1-conflicts', true],
  ['control', '~/.local/state/aalis', true],
  ['control', '~/.local/state/other-tool/x', false],
  ['denyRead', '~/.local/state/aalis/undone/run-1/.env', true],
  ['denyRead', '~/.local/state/aalis/daemons/0123.json', true],
  ['denyRead', '~/.local/state/other-tool/x', false],
  // control plane: loaded code
  ['control', '%/node_modules/zod/index.js', true],
  ['control', '%/dist/index.js', true],
  ['control', '%/packages/core/dist/index.js', true],
  ['control', '%/packages/core/node_modules/zod/index.js', true],
  ['control', '%/packages/core/src/index.ts', false],
  ['control', '%/packages/core/package.json', false],
  ['control', '%/package.json', false],
  ['control', '%/bin/aalis.cjs', false],
  ['control', '~/plugins/linked/index.js', true],
  ['control', '~/plugins/linked-other/index.js', false],
  // control plane: stores hard-linked into node_modules (the install's among them)
  ['control', '~/.local/share/pnpm/store/v11/files/ab/cdef', true, 'linux'],
  ['control', '~/Library/pnpm/store/v11/files/ab/cdef', true, 'darwin'],
  ['control', '~/.bun/install/cache/zod@3/index.js', true],
  ['control', '~/.local/share/pnpm/global/5/node_modules/x', false],
  // landings: self/
  ['landing', '@/self', true],
  ['landing', '@/self/skills/deploy.md', true],
  ['landing', '@/workspace/notes.md', false],
  // landings: git
  ['landing', '~/proj/.git', true],
  ['landing', '~/proj/sub/.git', true], // a submodule's working tree has a .git file
  ['landing', '~/proj/.git/hooks', true],
  ['landing', '~/proj/.git/hooks/pre-commit', true],
  ['landing', '~/proj/.git/config', true],
  ['landing', '~/proj/.git/config.worktree', true],
  ['landing', '~/proj/.git/commondir', true],
  ['landing', '~/proj/.git/modules', true],
  ['landing', '~/proj/.git/modules/libs/a/b/config', true], // submodule names with slashes, nested
  ['landing', '~/proj/.git/modules/a/modules/b/hooks/post-checkout', true],
  ['landing', '~/proj/.git/worktrees', true],
  ['landing', '~/proj/.git/worktrees/wt1', true],
  ['landing', '~/proj/.git/worktrees/wt1/config.worktree', true],
  ['landing', '~/proj/.git/worktrees/wt1/commondir', true], // a worktree's commondir
  ['landing', '~/proj/.git/worktrees/wt1/HEAD', false],
  ['landing', '~/proj/.git/worktrees/wt1/index', false],
  ['landing', '~/proj/.git/HEAD', false],
  ['landing', '~/proj/.git/index', false],
  ['landing', '~/proj/.git/objects/ab/cdef', false],
  ['landing', '~/proj/.git/refs/heads/main', false],
  ['landing', '~/proj/.github/workflows/ci.yml', true],
  ['landing', '~/proj/.github/CODEOWNERS', false],
  ['landing', '~/proj/.gitignore', false],
  // landings: shell and login
  ['landing', '~/.bashrc', true],
  ['landing', '~/.bash_profile', true],
  ['landing', '~/.profile', true],
  ['landing', '~/.zshrc', true],
  ['landing', '~/.zshenv', true],
  ['landing', '~/.zprofile', true],
  ['landing', '~/.config/fish/config.fish', true],
  ['landing', '~/.config/fish', true],
  ['landing', '~/.ssh/authorized_keys', true],
  ['landing', '~/.ssh/config', true],
  ['landing', '~/.gitconfig', true],
  ['landing', '~/.config/git/config', true],
  ['landing', '~/.config', true],
  ['landing', '~/.config/htop/htoprc', false],
  ['landing', '~/proj/.bashrc', false],
  ['landing', '~/.config/systemd/user/evil.service', true, 'linux'],
  ['landing', '~/.config/systemd', true, 'linux'],
  ['landing', '~/.config/autostart/evil.desktop', true, 'linux'],
  ['landing', '~/Library/LaunchAgents/evil.plist', false, 'linux'],
  ['landing', '~/Library/LaunchAgents/evil.plist', true, 'darwin'],
  ['landing', '~/Library/LaunchAgents', true, 'darwin'],
  ['landing', '~/Library', true, 'darwin'],
  ['landing', '~/Library/Preferences/x.plist', false, 'darwin'],
  ['landing', '~/.config/systemd/user/evil.service', false, 'darwin'],
  ['landing', '~/.config/autostart/evil.desktop', false, 'darwin'],
  // landings: project files tools execute
  ['landing', '~/proj/.envrc', true],
  ['landing', '~/proj/.vscode/tasks.json', true],
  ['landing', '~/proj/.vscode/settings.json', true],
  ['landing', '~/proj/.vscode/launch.json', false],
  ['landing', '~/proj/.vscode', true], // the target of a rename of a prepared tree
  ['landing', '~/proj/app.code-workspace', true],
  ['landing', '~/proj/.husky', true],
  ['landing', '~/proj/.husky/pre-commit', true],
  ['landing', '~/proj/.husky/_/h', true],
  ['landing', '~/proj/.pre-commit-config.yaml', true],
  ['landing', '~/proj/.claude', true],
  ['landing', '~/proj/.claude/settings.json', true],
  ['landing', '~/proj/.claude/settings.local.json', true],
  ['landing', '~/proj/.claude/agents/x.md', true],
  ['landing', '~/proj/.claude/hooks/check.sh', true],
  ['landing', '~/proj/.claude/notes.md', false],
  ['landing', '~/proj/.hg/hgrc', true],
  ['landing', '~/proj/aalis.config.json', true],
  ['landing', '~/proj/.vscode/mcp.json', true],
  ['landing', '~/proj/.mcp.json', true],
  ['landing', '~/proj/.cursor', true],
  ['landing', '~/proj/.cursor/hooks.json', true],
  ['landing', '~/proj/.cursor/hooks/after.sh', true],
  ['landing', '~/proj/.cursor/mcp.json', true],
  ['landing', '~/proj/.cursor/environment.json', true],
  ['landing', '~/proj/.cursor/rules/style.mdc', true],
  ['landing', '~/proj/.cursor/notes.txt', false],
  ['landing', '~/proj/.codex', true],
  ['landing', '~/proj/.codex/config.toml', true],
  ['landing', '~/proj/.codex/rules/default.rules', true],
  ['landing', '~/proj/.codex/hooks.json', true],
  ['landing', '~/proj/.codex/hooks/stop.sh', true],
  ['landing', '~/proj/.codex/sessions/x.jsonl', false],
  // landings: project instructions and project .aalis/
  ['landing', '~/proj/AALIS.md', true],
  ['landing', '~/proj/AGENTS.md', true],
  ['landing', '~/proj/docs/AGENTS.md', true],
  ['landing', '~/proj/README.md', false],
  ['landing', '~/proj/.aalis', true],
  ['landing', '~/proj/.aalis/plan.md', true],
  ['landing', '@/workspace/proj/.aalis', true], // inside the data dir named .aalis: still a project's
  ['landing', '@/workspace/proj/.aalis/x', true],
  ['landing', '@/workspace/proj/src/a.ts', false],
  ['landing', '@/tmp/s1/x', false],
  // deny-read: the data directory minus workspace/, self/, logs and main config
  ['denyRead', '@/plugins/reach/state.json', true],
  ['denyRead', '@/secrets.yaml', true],
  ['denyRead', '@/tmp/other-session/out.txt', true],
  ['denyRead', '@/run/daemon.sock', true],
  ['denyRead', '@/workspace/proj/a.ts', false],
  ['denyRead', '@/self/persona.md', false],
  ['denyRead', '@/logs/daemon.log', false],
  ['denyRead', '@/config.yaml', false],
  // deny-read: credential files
  ['denyRead', '~/.ssh/id_ed25519', true],
  ['denyRead', '~/.aws/credentials', true],
  ['denyRead', '~/.config/gh/hosts.yml', true],
  ['denyRead', '~/.gnupg/private-keys-v1.d/x.key', true],
  ['denyRead', '~/.npmrc', true],
  ['denyRead', '~/.netrc', true],
  ['denyRead', '~/.git-credentials', true],
  ['denyRead', '~/.docker/config.json', true],
  ['denyRead', '~/.docker/contexts/meta.json', false],
  ['denyRead', '~/.kube/config', true],
  ['denyRead', '~/.kube/cache/x', false],
  ['denyRead', '~/Library/Keychains/login.keychain-db', true, 'darwin'],
  ['denyRead', '~/Library/Keychains/login.keychain-db', false, 'linux'],
  // deny-read: .env* anywhere, with the exemptions
  ['denyRead', '~/proj/.env', true],
  ['denyRead', '~/proj/.env.local', true],
  ['denyRead', '~/proj/.env.production', true],
  ['denyRead', '~/proj/.envrc', true],
  ['denyRead', '@/workspace/proj/.env', true], // allowed places still hide .env*
  ['denyRead', '~/proj/.env.local/secret', true], // .env.local/ as a directory, whole
  ['denyRead', '~/proj/.env.local/.env.example', true],
  ['denyRead', '~/proj/.env.d/a/b/.env.sample', true],
  ['denyRead', '~/proj/.env.example', false],
  ['denyRead', '~/proj/.env.sample', false],
  ['denyRead', '~/proj/.env.template', false],
  ['denyRead', '~/proj/a/.e/.en/.envx/x', true],
  ['denyRead', '~/proj/.en/.e/.environ-not/.env.example', true],
  ['denyRead', '~/proj/.en/.e/.x/.env.example', false],
  ['denyRead', '~/proj/env', false],
  ['denyRead', '~/proj/prod.env', false],
  // deny-read: browser profiles
  ['denyRead', '~/.config/google-chrome/Default/Cookies', true, 'linux'],
  ['denyRead', '~/.config/chromium/Default/Login Data', true, 'linux'],
  ['denyRead', '~/.mozilla/firefox/x.default/logins.json', true, 'linux'],
  ['denyRead', '~/snap/firefox/common/.mozilla/firefox/p/cookies.sqlite', true, 'linux'],
  ['denyRead', '~/snap/chromium/common/chromium/Default/Cookies', true, 'linux'],
  ['denyRead', '~/.var/app/org.mozilla.firefox/.mozilla/x', true, 'linux'],
  ['denyRead', '~/.var/app/com.google.Chrome/config/google-chrome/x', true, 'linux'],
  ['denyRead', '~/.config/microsoft-edge/Default/Cookies', true, 'linux'],
  ['denyRead', '~/.config/BraveSoftware/Brave-Browser/Default/Cookies', true, 'linux'],
  ['denyRead', '~/.config/other-app/x', false, 'linux'],
  ['denyRead', '~/Library/Application Support/Google/Chrome/Default/Cookies', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/Microsoft Edge/Default/Cookies', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/Microsoft Edge Beta/Default/Cookies', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/Microsoft Edge Dev/Default/Cookies', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/Microsoft Edge Canary/Default/Cookies', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/Firefox/Profiles/x/logins.json', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/BraveSoftware/Brave-Browser/x', true, 'darwin'],
  ['denyRead', '~/Library/Safari/History.db', true, 'darwin'],
  ['denyRead', '~/Library/Application Support/Code/User/settings.json', false, 'darwin'],
  // the machine's own secrets: readable to a root daemon's commands (uid 0 without capabilities)
  ['denyRead', '/etc/shadow', true, 'linux'],
  ['denyRead', '/etc/gshadow-', true, 'linux'],
  ['denyRead', '/etc/sudoers.d/90-cloud', true, 'linux'],
  ['denyRead', '/etc/ssh/ssh_host_ed25519_key', true, 'linux'],
  ['denyRead', '/etc/ssh/ssh_host_ed25519_key.pub', false, 'linux'],
  ['denyRead', '/etc/ssl/private/site.key', true, 'linux'],
  ['denyRead', '/etc/passwd', false, 'linux'],
  ['denyRead', '/private/etc/master.passwd', true, 'darwin'],
  ['denyRead', '/private/var/db/dslocal/nodes/Default/users/ada.plist', true, 'darwin'],
  ['denyRead', '/private/etc/ssh/ssh_host_rsa_key', true, 'darwin'],
  ['denyRead', '/private/etc/hosts', false, 'darwin'],
];

const expand = (platform: 'linux' | 'darwin', template: string) => {
  const { home, install } = fixtures[platform];
  return template.replace(/^~/, home).replace(/^@/, `${home}/.aalis`).replace(/^%/, install);
};

describe.each(['linux', 'darwin'] as const)('protectedLists on %s', (platform) => {
  const lists = listsFor(platform);
  const cases = CASES.filter(([, , , only]) => only === undefined || only === platform).map(
    ([name, template, expected]) => [name, template, expected] as const,
  );
  it.each(cases)('%s %s → %s', (name, template, expected) => {
    expect(inList(lists, name, expand(platform, template))).toBe(expected);
  });

  it('darwin folds case, linux does not', () => {
    const path = expand(platform, '~/.SSH/id_rsa');
    expect(inList(lists, 'denyRead', path)).toBe(platform === 'darwin');
    expect(inList(lists, 'landing', expand(platform, '~/proj/.GIT/HOOKS/pre-commit'))).toBe(platform === 'darwin');
    expect(inList(lists, 'denyRead', expand(platform, '~/proj/.ENV.Example'))).toBe(false);
    expect(inList(lists, 'denyRead', expand(platform, '~/proj/.ENV.local'))).toBe(platform === 'darwin');
  });

  it('npm form adds the entry and the install package.json, and still loaded code', () => {
    const npm = listsFor(platform, 'npm');
    expect(inList(npm, 'control', expand(platform, '%/package.json'))).toBe(true);
    expect(inList(npm, 'control', expand(platform, '%/bin/aalis.cjs'))).toBe(true);
    expect(inList(npm, 'control', expand(platform, '%/node_modules/@aalis/core/x.js'))).toBe(true);
    expect(inList(npm, 'control', expand(platform, '%/packages/core/dist/x.js'))).toBe(false);
    expect(inList(npm, 'control', expand(platform, '%/src/x.ts'))).toBe(false);
  });
});

describe('protectedLists edge cases', () => {
  it("other accounts' credential files are denied like the user's own; the rest of their homes is not, nor the user's own home twice", () => {
    const { home } = fixtures.linux;
    const lists = listsFor('linux', 'source', ['/home/bob', home, '/']);
    expect(inList(lists, 'denyRead', '/home/bob/.ssh/id_ed25519')).toBe(true);
    expect(inList(lists, 'denyRead', '/home/bob/.aws/credentials')).toBe(true);
    expect(inList(lists, 'denyRead', '/home/bob/notes.txt')).toBe(false);
    expect(inList(lists, 'denyRead', '/.ssh/x')).toBe(false);
  });

  it('a home of / still yields /.ssh and the like', () => {
    const lists = protectedLists({ paths: hostPaths('/data', '/app'), userHome: '/', platform: 'linux', form: 'npm', codeDirs: [] });
    expect(inList(lists, 'denyRead', '/.ssh/id_rsa')).toBe(true);
    expect(inList(lists, 'denyRead', '/.aws/credentials')).toBe(true);
    expect(inList(lists, 'landing', '/.ssh/authorized_keys')).toBe(true);
    expect(inList(lists, 'landing', '/.bashrc')).toBe(true);
    expect(inList(lists, 'landing', '/.config')).toBe(true);
    expect(inList(lists, 'landing', '/etc/passwd')).toBe(false);
    expect(lists.denyRead.some((r) => 'path' in r && r.path.startsWith('//'))).toBe(false);
  });

  it('a config holding a secret (an inline model key) is on the deny-read list; one without is readable', () => {
    const paths = { ...hostPaths('/srv/app/data', '/opt/aalis', '/srv/app'), config: '/srv/app/aalis.config.json' };
    const plain = protectedLists({ paths, userHome: '/home/ada', platform: 'linux', form: 'npm', codeDirs: [] });
    const secret = protectedLists({ paths, userHome: '/home/ada', platform: 'linux', form: 'npm', codeDirs: [], configHoldsSecrets: true });
    expect(inList(plain, 'denyRead', '/srv/app/aalis.config.json')).toBe(false);
    expect(inList(secret, 'denyRead', '/srv/app/aalis.config.json')).toBe(true);
    expect(inList(secret, 'denyRead', '/srv/app/aalis.config.json.bak')).toBe(false);
    expect(inList(secret, 'control', '/srv/app/aalis.config.json')).toBe(true);
  });

  it('other instances of the same deployment are unreadable, this one and lookalikes are not', () => {
    const lists = protectedLists({
      paths: hostPaths('/srv/aalis/data-1', '/srv/aalis', '/srv/aalis'),
      userHome: '/home/svc',
      platform: 'linux',
      form: 'npm',
      codeDirs: [],
    });
    expect(inList(lists, 'denyRead', '/srv/aalis/data/plugins/x')).toBe(true);
    expect(inList(lists, 'denyRead', '/srv/aalis/data-2/workspace/x')).toBe(true);
    expect(inList(lists, 'denyRead', '/srv/aalis/data-2')).toBe(true);
    expect(inList(lists, 'denyRead', '/srv/aalis/data-1/workspace/x')).toBe(false);
    expect(inList(lists, 'denyRead', '/srv/aalis/data-1/plugins/x')).toBe(true); // own data dir: its own rule
    expect(inList(lists, 'denyRead', '/srv/aalis/database/x')).toBe(false);
    expect(inList(lists, 'denyRead', '/srv/aalis/README.md')).toBe(false);
  });

  it('a data directory not named .aalis leaves every .aalis inside it a project one', () => {
    const lists = protectedLists({ paths: hostPaths('/srv/state', '/opt/a'), userHome: '/home/a', platform: 'linux', form: 'npm', codeDirs: [] });
    expect(inList(lists, 'landing', '/srv/state/workspace/p/.aalis/x')).toBe(true);
    expect(inList(lists, 'landing', '/srv/state/workspace/p/x')).toBe(false);
    expect(inList(lists, 'landing', '/home/a/.aalis/x')).toBe(true);
  });

  it('refuses relative paths with a clear error', () => {
    expect(() => protectedLists({ paths: hostPaths('data', '/opt/a'), userHome: '/home/a', platform: 'linux', form: 'npm', codeDirs: [] })).toThrow(
      /paths\.data 'data' is not an absolute path/,
    );
    expect(() => protectedLists({ paths: hostPaths('/d', '/opt/a'), userHome: '~', platform: 'linux', form: 'npm', codeDirs: [] })).toThrow(/userHome/);
  });
});

describe('protectedLists on win32: the comparison rules', () => {
  const lists = protectedLists({
    paths: hostPaths('C:\\Users\\Ada\\.aalis', 'C:\\Program Files\\Aalis'),
    userHome: 'C:\\Users\\Ada',
    platform: 'win32',
    form: 'npm',
    codeDirs: [],
    entry: 'C:\\Program Files\\Aalis\\bin\\aalis.cjs',
  });
  it.each<[ListName, string, boolean]>([
    ['denyRead', 'c:\\users\\ada\\.SSH\\id_rsa', true],
    ['denyRead', 'C:/Users/Ada/.aws/credentials', true],
    ['denyRead', 'C:\\Users\\Ada\\proj\\.Env.Local', true],
    ['denyRead', 'C:\\Users\\Ada\\proj\\.ENV.EXAMPLE', false],
    ['denyRead', 'C:\\Users\\Ada\\.aalis\\Plugins\\x', true],
    ['denyRead', 'C:\\Users\\Ada\\.aalis\\WORKSPACE\\x', false],
    ['landing', 'C:\\Users\\Ada\\proj\\.GIT\\hooks\\pre-commit', true],
    ['landing', 'C:\\Users\\Ada\\proj\\.vscode\\Tasks.json', true],
    ['landing', 'c:\\users\\ada\\.gitconfig', true],
    ['landing', 'C:\\Users\\Ada\\.aalis\\workspace\\p\\.AALIS\\x', true],
    ['landing', 'C:\\Users\\Ada\\.aalis\\workspace\\p\\x', false],
    ['control', 'C:\\Users\\Ada\\.aalis\\Plugins\\x', true],
    ['control', 'c:/users/ada/.aalis/workspace/x', false],
    ['control', 'C:\\Program Files\\Aalis\\node_modules\\x', true],
    ['control', 'C:\\Program Files\\Aalis\\package.json', true],
    ['control', 'C:\\Program Files\\Aalis\\bin\\AALIS.CJS', true],
    ['control', 'C:\\Program Files\\Aalis2\\node_modules\\x', false],
  ])('%s %s → %s', (name, path, expected) => {
    expect(inList(lists, name, path)).toBe(expected);
  });
});
