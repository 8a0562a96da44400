import { browserProfileDirs } from './browser-profiles.js';
import { ReachInputError } from './errors.js';
import type { HostPaths, InstallForm } from './host-paths.js';
import { type ExtraLanding, landingRules } from './landing-rules.js';
import type { ProtectedLists } from './lists.js';
import { assertRealPathShape, baseName, escapePattern, joinPath } from './path.js';
import type { PathRule } from './rule.js';
import { systemSecretPaths } from './system-secrets.js';
import { linkedStoreDirs } from './toolchain-caches.js';
import { type XdgBaseDirs, xdgAliasOf } from './xdg-dirs.js';

/** What {@link protectedLists} builds the lists from. Every path is a real, absolute path. */
export interface ProtectedListsInput {
  readonly paths: HostPaths;
  /** The user's home directory; `/` (a container user without a passwd entry) still yields `/.ssh`. */
  readonly userHome: string;
  readonly platform: NodeJS.Platform;
  /** The install's form: `packages/` in source form; a generated project (data inside) in npm form. */
  readonly form: InstallForm;
  /** Directories outside the install the daemon loaded code from (plugins linked in, say). */
  readonly codeDirs: readonly string[];
  /** The daemon's entry file (the real path of its start script), when it could be told. */
  readonly entry?: string;
  /** The user's login name, for landings named after it (powerlevel10k's instant prompt); left out when unknown. */
  readonly userName?: string;
  /** Landings added by configuration (the reach plugin's `landings`), after the table's. */
  readonly extraLandings?: readonly ExtraLanding[];
  /**
   * The home directories of the machine's other accounts (real paths): their credential files
   * are denied like the user's own, which matters when the daemon is root and could read them.
   */
  readonly otherHomes?: readonly string[];
  /**
   * The daemon's state outside its data directory ({@link aalisStateDir}: the daemon registry,
   * the sandbox's undone folder), a real path: control plane and hidden, like the data directory.
   */
  readonly stateDir?: string;
  /**
   * The config file holds a secret itself (an inline model key, where `apiKeyEnv` would keep it in
   * the environment): then it is on the deny-read list like the secrets file, never read by a tool.
   */
  readonly configHoldsSecrets?: boolean;
  /**
   * The user's XDG base directories set elsewhere than their home defaults (real paths, from
   * `xdgBaseDirsOf`): the landings and credentials under `~/.config`, `~/.cache`, … are also
   * there, where the tools look for them.
   */
  readonly xdg?: XdgBaseDirs;
}

/** Credential files and directories in the user's home, on every platform. */
export const CREDENTIAL_FILES = [
  '.ssh',
  '.aws',
  '.config/gh',
  '.gnupg',
  '.npmrc',
  '.netrc',
  '.git-credentials',
  '.docker/config.json',
  '.kube/config',
] as const;

/** A segment that does not start with `.env`, so an exempt name inside a `.env*` directory stays denied. */
const NOT_ENV_SEGMENT = '(?:[^./][^/]*|\\.(?:[^e/][^/]*)?|\\.e(?:[^n/][^/]*)?|\\.en(?:[^v/][^/]*)?)';

/** `.env*` anywhere (a directory so named, whole), except the example, sample and template files. */
export const ENV_FILES: PathRule = {
  pattern: '^.*/\\.env[^/]*(?:/.*)?$',
  except: [{ pattern: `^${NOT_ENV_SEGMENT}?(?:/${NOT_ENV_SEGMENT}?)*/\\.env\\.(?:example|sample|template)$` }],
};

function control(input: ProtectedListsInput, p: HostPaths, codeDirs: readonly string[], entry: string | undefined, userHome: string, xdg: XdgBaseDirs | undefined): PathRule[] {
  const rules: PathRule[] = [
    // the same inodes as the install's node_modules: the daemon's code by another name
    ...linkedStoreDirs(userHome, input.platform).map((path) => ({ path })),
    // pnpm keeps its store in $XDG_DATA_HOME/pnpm/store when that is set (on every platform)
    ...(xdg?.data ?? []).map((dir) => ({ path: joinPath(dir, 'pnpm/store') })),
    { path: p.data, except: [{ path: p.workspace }, { path: p.tmp }, { path: p.self }] },
    { path: p.config },
    { path: p.secrets },
    { path: joinPath(p.install, 'node_modules') },
    { path: joinPath(p.install, 'dist') },
  ];
  if (input.form === 'source') {
    rules.push({ pattern: `^${escapePattern(joinPath(p.install, 'packages'))}/[^/]+/(?:dist|node_modules)(?:/.*)?$` });
  }
  for (const dir of codeDirs) rules.push({ path: dir });
  if (input.stateDir !== undefined) rules.push({ path: checked(input.stateDir, input.platform, 'stateDir') });
  if (input.form === 'npm') {
    if (entry !== undefined) rules.push({ path: entry });
    rules.push({ path: joinPath(p.install, 'package.json') });
  }
  return rules;
}

function denyRead(p: HostPaths, home: (rel: string) => string, platform: NodeJS.Platform, otherHomes: readonly string[], stateDir: string | undefined, xdgAlias: (rel: string) => readonly string[]): PathRule[] {
  const rules: PathRule[] = [
    { path: p.data, except: [{ path: p.workspace }, { path: p.self }, { path: p.logs }, { path: p.config }] },
    { path: p.secrets },
  ];
  if (stateDir !== undefined) rules.push({ path: checked(stateDir, platform, 'stateDir') });
  if (p.deployment !== undefined) {
    rules.push({ pattern: `^${escapePattern(p.deployment)}/data(?:-[^/]*)?(?:/.*)?$`, except: [{ path: p.data }] });
  }
  for (const rel of CREDENTIAL_FILES) rules.push({ path: home(rel) });
  if (platform === 'darwin') rules.push({ path: home('Library/Keychains') });
  // where the user's XDG base directories put them (gh's hosts.yml under $XDG_CONFIG_HOME/gh, say)
  for (const rel of [...CREDENTIAL_FILES, ...browserProfileDirs(platform)]) for (const path of xdgAlias(rel)) rules.push({ path });
  for (const other of otherHomes) {
    for (const rel of CREDENTIAL_FILES) rules.push({ path: joinPath(other, rel) });
    if (platform === 'darwin') rules.push({ path: joinPath(other, 'Library/Keychains') });
  }
  for (const path of systemSecretPaths(platform)) rules.push({ path });
  rules.push(ENV_FILES);
  for (const rel of browserProfileDirs(platform)) rules.push({ path: home(rel) });
  return rules;
}

function checked(path: string, platform: NodeJS.Platform, what: string): string {
  return assertRealPathShape(path, platform, what);
}

/**
 * The three protected lists of this install: the host control plane (never writable), the
 * persistence and auto-execution landings (writing one asks), and the deny-read list. Paths
 * are taken as given (real paths); run the result through `withRealRoots` to add the real
 * roots of linked paths. Throws {@link ReachInputError} for a path that is not absolute.
 */
export function protectedLists(input: ProtectedListsInput): ProtectedLists {
  const { platform } = input;
  const raw = input.paths;
  const p: HostPaths = {
    install: checked(raw.install, platform, 'paths.install'),
    data: checked(raw.data, platform, 'paths.data'),
    workspace: checked(raw.workspace, platform, 'paths.workspace'),
    tmp: checked(raw.tmp, platform, 'paths.tmp'),
    self: checked(raw.self, platform, 'paths.self'),
    logs: checked(raw.logs, platform, 'paths.logs'),
    config: checked(raw.config, platform, 'paths.config'),
    secrets: checked(raw.secrets, platform, 'paths.secrets'),
    ...(raw.deployment === undefined ? {} : { deployment: checked(raw.deployment, platform, 'paths.deployment') }),
  };
  const userHome = checked(input.userHome, platform, 'userHome');
  const home = (rel: string) => joinPath(userHome, rel);
  const codeDirs = input.codeDirs.map((d) => checked(d, platform, 'a code directory'));
  const entry = input.entry === undefined ? undefined : checked(input.entry, platform, 'entry');
  const xdg: XdgBaseDirs | undefined = input.xdg === undefined ? undefined : Object.fromEntries(Object.entries(input.xdg).map(([kind, dirs]) => [kind, dirs.map((dir) => checked(dir, platform, `xdg.${kind}`))]));
  if (baseName(p.data) === '') {
    throw new ReachInputError('path', `paths.data '${raw.data}' is a root directory; give the instance its own data directory.`);
  }
  return {
    platform,
    control: control(input, p, codeDirs, entry, userHome, xdg),
    landing: landingRules({
      platform,
      home: userHome,
      self: p.self,
      data: p.data,
      ...(input.userName === undefined ? {} : { userName: input.userName }),
      ...(xdg === undefined ? {} : { xdg }),
      extra: input.extraLandings ?? [],
    }),
    denyRead: denyRead(
      p,
      home,
      platform,
      (input.otherHomes ?? []).map((d) => checked(d, platform, 'another account\'s home')).filter((d) => d !== userHome && baseName(d) !== ''),
      input.stateDir,
      (rel) => (xdg === undefined ? [] : xdgAliasOf(rel, userHome, xdg, platform)),
    ).concat(input.configHoldsSecrets === true ? [{ path: p.config }] : []),
  };
}
