import type { PathRule, SandboxPolicy } from '@aalis/api-reach';

// Policies shaped like the ones sandboxPolicyOf gives on a Mac (004: the three lists, the layer
// order), for the owner "ana" with her project in ~/src/app and the data directory ~/.aalis.
// Written by hand here because api-reach's sandboxPolicyOf is not there yet; the shapes follow
// the contract, the values are realistic, not exhaustive.

const HOME = '/Users/ana';
const DATA = `${HOME}/.aalis`;
const PROJECT = `${HOME}/src/app`;
const SESSION_TMP = `${DATA}/tmp/s-7f3a`;

const BROWSERS = [
  'Library/Application Support/Google/Chrome',
  'Library/Application Support/Firefox',
  'Library/Application Support/Microsoft Edge',
  'Library/Application Support/Microsoft Edge Beta',
  'Library/Application Support/Microsoft Edge Dev',
  'Library/Application Support/Microsoft Edge Canary',
  'Library/Application Support/BraveSoftware/Brave-Browser',
  'Library/Safari',
];
const CREDENTIALS = ['.ssh', '.aws', '.config/gh', '.gnupg', '.npmrc', '.netrc', '.git-credentials', '.docker/config.json', '.kube/config', 'Library/Keychains'];

const readDeny: PathRule[] = [
  { path: DATA, except: [{ path: `${DATA}/workspace` }, { path: `${DATA}/self` }, { path: `${DATA}/logs` }, { path: `${DATA}/config.yaml` }] },
  ...CREDENTIALS.map((tail) => ({ path: `${HOME}/${tail}` })),
  { pattern: '^.*/\\.env[^/]*(?:/.*)?$', except: [{ pattern: '^(?:[^/]*/)*\\.env\\.(?:example|sample|template)$' }] },
  ...BROWSERS.map((tail) => ({ path: `${HOME}/${tail}` })),
];

const landings: PathRule[] = [
  { path: `${DATA}/self` },
  { pattern: '^.*/\\.git$' },
  { pattern: '^.*/\\.git/hooks(?:/.*)?$' },
  { pattern: '^.*/\\.git/(?:config|config\\.worktree|commondir)$' },
  { pattern: '^.*/\\.git/modules(?:/.*)?$' },
  { pattern: '^.*/\\.git/worktrees(?:/[^/]+)?(?:/(?:config\\.worktree|commondir))?$' },
  ...['.zshrc', '.zprofile', '.bashrc', '.bash_profile', '.profile', '.config/fish', '.ssh', '.gitconfig', '.config/git', 'Library/LaunchAgents'].map((tail) => ({ path: `${HOME}/${tail}` })),
  { pattern: '^.*/(?:\\.envrc|\\.vscode/(?:tasks|settings)\\.json|[^/]*\\.code-workspace|\\.pre-commit-config\\.yaml|\\.mcp\\.json)$' },
  { pattern: '^.*/\\.husky(?:/.*)?$' },
  { pattern: '^.*/\\.claude/settings[^/]*\\.json$' },
  { pattern: '^.*/(?:AALIS|AGENTS)\\.md$' },
  { pattern: '^.*/\\.aalis(?:/.*)?$', except: [{ path: DATA }] },
  { pattern: '^.*/\\.(?:vscode|claude|cursor|codex)$' },
  // The directories themselves, not what is under them (004: 装着上面这些的目录本身).
  { pattern: '^/Users/ana/\\.config$' },
  { pattern: '^/Users/ana/Library$' },
];

const control: PathRule[] = [
  { path: DATA, except: [{ path: `${DATA}/workspace` }, { path: `${DATA}/tmp` }, { path: `${DATA}/self` }] },
  { path: `${DATA}/config.yaml` },
  { path: `${DATA}/secrets.yaml` },
  { path: '/usr/local/lib/node_modules/aalis' },
];

/** The readonly tier: nothing writable but the session temp, network off. */
export const readonlyPolicy: SandboxPolicy = {
  readDeny,
  readAllowWithin: [SESSION_TMP],
  write: [SESSION_TMP],
  writeDeny: landings,
  writeExceptions: [],
  controlDeny: control,
  network: 'off',
  localPorts: [4680],
  unixSockets: [SESSION_TMP],
};

const CACHES = ['.npm', '.cache', '.cargo/registry', 'Library/Caches', 'Library/pnpm', '.yarn/berry/cache', 'go/pkg/mod', '.gradle/caches', '.m2/repository', '.bun/install/cache'];

/** The workspace tier: the project, its git dir, the toolchain caches, the platform temp; network on minus the daemon's ports. */
export const workspacePolicy: SandboxPolicy = {
  readDeny,
  readAllowWithin: [SESSION_TMP],
  write: [PROJECT, `${PROJECT}/.git`, SESSION_TMP, '/var/folders/x1/abc123/T', ...CACHES.map((tail) => `${HOME}/${tail}`)],
  writeDeny: landings,
  writeExceptions: [{ pattern: '^/Users/ana/src/app/(?:.*/)?node_modules(?:/.*)?$' }, { pattern: '^/Users/ana/src/app/\\.vscode/settings\\.json$' }],
  controlDeny: control,
  network: 'on',
  localPorts: [4680, 4681],
  unixSockets: [PROJECT, SESSION_TMP],
};
