import { type Dirent, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { type PathMatcher, type PathRule, type SandboxPolicy, toolchainCacheDirs } from '@aalis/api-reach';
import { type HostSocketFacts, hostSocketFacts } from './host-sockets.js';
import { layersOf } from './layers.js';
import { placeholderCandidates } from './new-entries.js';
import { isWithin, ruleSet } from './rule-match.js';

/** What sits at a path on the host, as far as mounting is concerned. */
export type EntryKind = 'dir' | 'file';

/** A path a pattern rule matched while walking, or a socket to hide. */
export interface FoundEntry {
  /** Where the mount goes: the real path (a symlink's target). */
  readonly path: string;
  readonly kind: EntryKind;
  /** The path the rules matched, when it differs from `path` (a symlink). */
  readonly via?: string;
}

/** What the translation needs to know about the host file system; gathered by {@link scanHost}. */
export interface HostFacts extends HostSocketFacts {
  /** Kind of every path the policy names (roots, rule paths), and of the cwd; missing paths are absent. */
  readonly kinds: ReadonlyMap<string, EntryKind>;
  /** Existing paths under the scanned roots that a pattern rule (or an `except`) matched. */
  readonly found: readonly FoundEntry[];
  /** Named paths that exist only as dangling symlinks: neither mountable nor free for a placeholder. */
  readonly dangling?: readonly string[];
  /** Real paths of system files that must stay readable whatever is hidden around them (see {@link KEEP_READABLE}). */
  readonly keepReadable?: readonly string[];
  /** Entries visited by the walk. */
  readonly visited: number;
}

/** Limits of the walk that finds pattern matches. */
export interface ScanOptions {
  /** Stop and fail closed beyond this many entries. */
  readonly maxEntries?: number;
  /** Directory names not descended into (their contents cannot match deny patterns we act on). */
  readonly pruneNames?: readonly string[];
}

/** Directories skipped by the walk unless told otherwise: dependency trees and git's object store. */
export const DEFAULT_PRUNE_NAMES = ['node_modules', 'objects', 'lfs'] as const;
const PRUNE_ONLY_IN_GIT = new Set(['objects', 'lfs']);

/** Thrown when the host cannot be scanned within the limits: the policy is not translated. */
export class ScanLimitError extends Error {
  override readonly name = 'ScanLimitError';
  constructor(
    readonly root: string,
    readonly limit: number,
  ) {
    super(`more than ${limit} entries under ${root}`);
  }
}

function rules(policy: SandboxPolicy): PathRule[] {
  return [...policy.readDeny, ...policy.writeDeny, ...policy.writeExceptions, ...policy.controlDeny];
}

function matchers(policy: SandboxPolicy): PathMatcher[] {
  return rules(policy).flatMap((r) => [r, ...(r.except ?? [])]);
}

/** Every concrete path the policy names (roots, `{ path }` rules and their exceptions) and the placeholder candidates. */
export function namedPaths(policy: SandboxPolicy, cwd: string): string[] {
  const paths = new Set<string>([...policy.write, ...policy.readAllowWithin, ...policy.unixSockets, cwd]);
  for (const m of matchers(policy)) if ('path' in m) paths.add(m.path);
  for (const p of placeholderCandidates(policy, cwd)) paths.add(p);
  return [...paths];
}

/** The toolchain caches of api-reach's allow list, as suffixes a writable root can end in (`/.npm`, `/.cache`, …). */
export const TOOLCHAIN_CACHE_SUFFIXES: readonly string[] = toolchainCacheDirs('/', 'linux').map((p) => (p.startsWith('/') ? p : `/${p}`));

/** Whether a writable root is one of the toolchain caches (under any home). */
export function isToolchainCache(root: string): boolean {
  return TOOLCHAIN_CACHE_SUFFIXES.some((s) => root.endsWith(s));
}

/**
 * The roots whose contents are walked for pattern matches: what the sandbox can write or read
 * back, less the toolchain caches (content stores of hundreds of thousands of files, walked on
 * every run they would make every command slow or trip the scan limit; what they hold is not
 * searched for `.env` files or landings).
 */
export function scanRoots(policy: SandboxPolicy): string[] {
  const all = [...new Set([...policy.write, ...policy.readAllowWithin])].filter((r) => !isToolchainCache(r)).sort();
  return all.filter((r) => !all.some((o) => o !== r && isWithin(r, o)));
}

function kindOf(path: string): EntryKind | undefined {
  try {
    // most named paths are placeholder candidates that do not exist: no exception for those
    const st = statSync(path, { throwIfNoEntry: false });
    return st === undefined ? undefined : st.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/**
 * System files that are often symlinks into a runtime directory (`/run/systemd/resolve`,
 * `/run/NetworkManager`, `/run/resolvconf`): hiding such a directory whole would break name
 * resolution in the sandbox.
 */
export const KEEP_READABLE = ['/etc/resolv.conf', '/etc/hosts', '/etc/localtime'] as const;

/** The real paths behind {@link KEEP_READABLE}. */
export function keepReadablePaths(): string[] {
  const out: string[] = [];
  for (const p of KEEP_READABLE) {
    try {
      out.push(realpathSync.native(p));
    } catch {
      // missing, or dangling: nothing to keep
    }
  }
  return out;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false; // ENOTDIR, EACCES: nothing there to mount or to make
  }
}

/**
 * Looks at the host for what the policy's rules need: kinds of named paths, pattern matches under
 * the writable and read-back roots (a bounded walk that does not follow symlinks and skips
 * {@link DEFAULT_PRUNE_NAMES}), and the host's unix sockets. `placeholders` are those of runs now
 * going on (empty directories this process made): they count as missing.
 */
export function scanHost(policy: SandboxPolicy, cwd: string, options: ScanOptions = {}, placeholders: ReadonlySet<string> = new Set()): HostFacts {
  const kinds = new Map<string, EntryKind>();
  const dangling: string[] = [];
  for (const p of namedPaths(policy, cwd)) {
    if (placeholders.has(p)) continue; // another run's placeholder: this run plans (and shares) its own
    const k = kindOf(p);
    if (k) kinds.set(p, k);
    else if (isSymlink(p)) dangling.push(p);
  }
  const { found, visited } = findPatternMatches(policy, options, placeholders);
  return { kinds, found, ...hostSocketFacts(), keepReadable: keepReadablePaths(), dangling, visited };
}

/**
 * The pattern half of {@link scanHost}: existing entries under the scanned roots that a pattern
 * rule or carve-out matches. The look after a run needs only this part.
 */
export function findPatternMatches(policy: SandboxPolicy, options: ScanOptions = {}, skip: ReadonlySet<string> = new Set()): { found: FoundEntry[]; visited: number } {
  const patterns = matchers(policy).flatMap((m) => ('pattern' in m ? [{ pattern: m.pattern }] : []));
  const found: FoundEntry[] = [];
  let visited = 0;
  if (patterns.length === 0) return { found, visited };
  const any = ruleSet(patterns); // every pattern and carve-out at once; invalid ones throw before any walk
  const layers = layersOf(policy);
  const limit = options.maxEntries ?? 1_000_000;
  const prune = new Set(options.pruneNames ?? DEFAULT_PRUNE_NAMES);
  for (const root of scanRoots(policy)) {
    if (kindOf(root) !== 'dir') continue;
    const stack: string[] = [root];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // unreadable here is unreadable in the sandbox too
      }
      visited += entries.length;
      if (visited > limit) throw new ScanLimitError(root, limit);
      const inGit = dir.endsWith('/.git');
      for (const e of entries) {
        const path = `${dir}/${e.name}`;
        if (skip.has(path)) continue;
        const hit = any.covers(path);
        if (e.isSymbolicLink()) {
          if (hit) {
            try {
              const real = realpathSync(path);
              const k = kindOf(real);
              if (k) found.push({ path: real, kind: k, via: path });
            } catch {
              // dangling: nothing behind it to read or write through
            }
          }
          continue;
        }
        const isDir = e.isDirectory();
        if (hit) found.push({ path, kind: isDir ? 'dir' : 'file' });
        if (!isDir) continue;
        if (prune.has(e.name) && (!PRUNE_ONLY_IN_GIT.has(e.name) || inGit)) continue;
        if (hit && layers.hidden(path)) continue; // hidden whole
        stack.push(path);
      }
    }
  }
  return { found, visited };
}
