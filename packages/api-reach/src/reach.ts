import { ReachInputError } from './errors.js';
import type { HostPaths } from './host-paths.js';
import type { ProtectedLists } from './lists.js';
import { type CompiledRules, compileList, compileRules, unionRules } from './match.js';
import { assertRealPathShape, escapePattern, foldPath } from './path.js';
import type { PathRule } from './rule.js';
import { ACCESS_TIERS, type AccessTier, BOUNDARY_POLICIES, type BoundaryPolicy, execOfTier, type ReachPrincipal } from './tier.js';

/** What {@link resolveReach} resolves a reach from; every path is a real, absolute path. */
export interface ReachInput {
  readonly principal: ReachPrincipal;
  /** The effective tier; a child session takes its root session's. */
  readonly tier: AccessTier;
  /** The effective boundary policy; a child session takes its root session's. */
  readonly onBoundary: BoundaryPolicy;
  /** The session's main directory (where a tool without a cwd starts). */
  readonly place: { readonly home: string };
  /** The session's binding: extra writable roots and the worktrees its session tree made. */
  readonly binding?: { readonly extraRoots: readonly string[]; readonly worktrees: readonly string[] };
  /** The git directories (common dirs) of the repository the binding is in. */
  readonly gitDirs: readonly string[];
  /** This session's temp area. */
  readonly sessionTmp: string;
  /** Ports on the host's loopback the sandbox must not connect to. */
  readonly localPorts: readonly number[];
  readonly lists: ProtectedLists;
  readonly paths: HostPaths;
  /**
   * Toolchain caches writable without asking in the workspace tier (see `toolchainCacheDirs`).
   * An addition to the reach contract's input, for the allow list of the sandbox specification.
   */
  readonly toolchainCaches?: readonly string[];
}

/** A reach with local effect: an owner's call. Treat it as immutable; rules are compiled once for it. */
export interface LocalReach {
  /** Where commands run: in the sandbox (readonly, workspace) or on the host (confirm, full). */
  readonly exec: 'sandbox' | 'host';
  readonly tier: AccessTier;
  readonly onBoundary: BoundaryPolicy;
  /** The session's main directory. */
  readonly home: string;
  /**
   * Where a write needs no ask: the session temp in `readonly`; the main directory, extra roots,
   * worktrees, git directories, toolchain caches and session temp in `workspace`; none in `confirm`
   * (every write asks) and none needed in `full` (everything but the control plane is writable).
   */
  readonly writableRoots: readonly string[];
  readonly sessionTmp: string;
  readonly gitDirs: readonly string[];
  readonly localPorts: readonly number[];
  /** The input's lists, the landings extended by the git directories and the bare-repository `HEAD`. */
  readonly lists: ProtectedLists;
  readonly paths: HostPaths;
}

/** What one tool call may touch on this machine: nothing (`other`), or a {@link LocalReach}. */
export type Reach = { readonly exec: 'none' } | LocalReach;

/** The rules of one reach compiled for its platform, once. */
export interface CompiledReach {
  readonly platform: NodeJS.Platform;
  readonly control: CompiledRules;
  readonly landing: CompiledRules;
  readonly denyRead: CompiledRules;
  /** The writable roots, as one matcher. */
  readonly roots: CompiledRules;
  /** The folded session temp. */
  readonly tmp: string;
}

const compiled = new WeakMap<LocalReach, CompiledReach>();

function compile(reach: LocalReach, baseLanding: readonly PathRule[] | undefined): CompiledReach {
  const { platform } = reach.lists;
  const { landing } = reach.lists;
  return {
    platform,
    control: compileList(reach.lists.control, platform),
    landing:
      baseLanding === undefined
        ? compileRules(landing, platform)
        : unionRules([compileList(baseLanding, platform), compileRules(landing.slice(baseLanding.length), platform)], platform),
    denyRead: compileList(reach.lists.denyRead, platform),
    roots: compileRules(
      reach.writableRoots.map((path) => ({ path })),
      platform,
    ),
    tmp: foldPath(reach.sessionTmp, platform),
  };
}

/** The compiled rules of a reach: made by {@link resolveReach}, or compiled now and kept. */
export function compiledReach(reach: LocalReach): CompiledReach {
  let c = compiled.get(reach);
  if (c === undefined) {
    c = compile(reach, undefined);
    compiled.set(reach, c);
  }
  return c;
}

/**
 * The landings a reach adds for its git directories: a git directory need not be called `.git`
 * (a bare repository with worktrees, `--separate-git-dir`), so each one itself and the git
 * landings inside it are landings; and a `HEAD` file anywhere but in `.git` and these git
 * directories, because it is what disguises a directory as a bare repository.
 */
export function gitDirLandings(gitDirs: readonly string[]): PathRule[] {
  const inside =
    '(?:/(?:hooks(?:/.*)?|config|config\\.worktree|commondir|modules(?:/.*)?|worktrees(?:/[^/]+(?:/(?:config\\.worktree|commondir))?)?))?';
  return [
    ...gitDirs.map((g) => ({ pattern: `^${escapePattern(g)}${inside}$` })),
    { pattern: '^.*/HEAD$', except: [{ pattern: '^.*/\\.git/.*$' }, ...gitDirs.map((g) => ({ path: g }))] },
  ];
}

const NONE: Reach = Object.freeze({ exec: 'none' });

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new ReachInputError('request', `${what} '${String(value)}' is not one of ${allowed.join(', ')}.`);
  }
  return value as T;
}

function rootsOf(input: ReachInput, platform: NodeJS.Platform, home: string, tmp: string, gitDirs: readonly string[]): string[] {
  const real = (p: string, what: string) => assertRealPathShape(p, platform, what);
  switch (input.tier) {
    case 'readonly':
      return [tmp];
    case 'workspace':
      return [
        home,
        ...(input.binding?.extraRoots ?? []).map((r) => real(r, 'an extra root')),
        ...(input.binding?.worktrees ?? []).map((w) => real(w, 'a worktree')),
        ...gitDirs,
        ...(input.toolchainCaches ?? []).map((c) => real(c, 'a toolchain cache')),
        tmp,
      ];
    default:
      return [];
  }
}

/**
 * Resolves what one call may touch. The principal caps it: `other` has no local effect at all
 * (`{ exec: 'none' }`); an owner's call runs commands in the sandbox in `readonly` and
 * `workspace` and on the host in `confirm` and `full`. The landings are extended by
 * {@link gitDirLandings}. Rules are compiled here, once per reach; a bad path or pattern throws
 * {@link ReachInputError}, so nothing runs under a reach that could not be built.
 */
export function resolveReach(input: ReachInput): Reach {
  const principal = oneOf(input.principal, ['owner', 'other'] as const, 'principal');
  if (principal === 'other') return NONE;
  const tier = oneOf(input.tier, ACCESS_TIERS, 'tier');
  const onBoundary = oneOf(input.onBoundary, BOUNDARY_POLICIES, 'onBoundary');
  const { platform } = input.lists;
  const home = assertRealPathShape(input.place.home, platform, 'place.home');
  const sessionTmp = assertRealPathShape(input.sessionTmp, platform, 'sessionTmp');
  const gitDirs = input.gitDirs.map((g) => assertRealPathShape(g, platform, 'a git directory'));
  for (const port of input.localPorts) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ReachInputError('request', `local port ${String(port)} is not a TCP port (1-65535).`);
    }
  }
  // control and denyRead are the input's own arrays, so lists built once compile once (compileList).
  const lists: ProtectedLists = Object.freeze({
    platform,
    control: input.lists.control,
    landing: Object.freeze([...input.lists.landing, ...gitDirLandings(gitDirs)]),
    denyRead: input.lists.denyRead,
  });
  const reach: LocalReach = Object.freeze({
    exec: execOfTier(tier),
    tier,
    onBoundary,
    home,
    writableRoots: Object.freeze(rootsOf(input, platform, home, sessionTmp, gitDirs)),
    sessionTmp,
    gitDirs: Object.freeze(gitDirs),
    localPorts: Object.freeze([...input.localPorts]),
    lists,
    paths: input.paths,
  });
  compiled.set(reach, compile(reach, input.lists.landing));
  return reach;
}
