import { createHash } from 'node:crypto';
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { escapePattern, type PathMatcher, type PathRule, type SandboxPolicy, toolchainCacheDirs } from '@aalis/api-reach';
import { type HostSocketFacts, hostSocketFacts } from './host-sockets.js';
import { policyEvaluatorOf } from './policy-evaluator.js';
import { AalisError, decodeName, encodePath } from '@aalis/core';
import { atFd, listingCacheFor, type WalkEntry, walkTree } from './host-walk.js';
import { NEW_ENTRY_NAMES, placeholderCandidates } from './placeholders.js';
import { groupHidden, MAX_HIDDEN_MOUNTS } from './hidden-groups.js';
import { isWithin, ruleSet } from './rule-match.js';
import { INDEX_MIN_ENTRIES, treeIndex } from './tree-index.js';
import { treeMemoFor } from './tree-memo.js';
import { REUSE_SETTLED_MS, ScanReuse, ScanWitness } from './scan-reuse.js';
import { loadReuseFile, type ReuseFileLoad, storeReuseFile } from './scan-reuse-file.js';
import { z } from 'zod';
import type { LinuxErrorCode } from './linux-error-codes.js';

/** What sits at a path on the host, as far as mounting is concerned. */
export type EntryKind = 'dir' | 'file';

/** A path a pattern rule matched while walking, or a socket to hide. */
export interface FoundEntry {
  /** Where the mount goes: the real path (a symlink's target). */
  readonly path: string;
  readonly kind: EntryKind;
  /** The path the rules matched, when it differs from `path` (a symlink). */
  readonly via?: string;
  /**
   * Hidden whole whatever the rules say: a directory the walk could not list (it may hide
   * anything), or the deepest mountable ancestor of a match deeper than PATH_MAX (`via` the match).
   */
  readonly hide?: true;
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
  /** Every path a pattern matched (symlinks by their own path), before grouping: what existed, for the looks. */
  readonly matched?: readonly string[];
  /** Symlinks a pattern matched that lead nowhere now: the commit protects the way they would resolve. */
  readonly danglingLinks?: readonly string[];
  /** Directories the walk could not list (hidden whole, see {@link FoundEntry.hide}), for the report. */
  readonly unreadable?: readonly string[];
  /** Entries visited by the walk. */
  readonly visited: number;
  /** The tree index's generation the scan started at (tree-index.ts), when there is one: what the looks after it may skip. */
  readonly indexGen?: number;
}

/** How far the walk looks, beyond the roots it walks whole. */
export interface ScanOptions {
  /** Stop and fail closed beyond this many entries looked at (directories and matches). No limit unless set. */
  readonly maxEntries?: number;
  /** The user's home, walked to {@link ScanOptions.homeDepth} levels for deny-read matches. Default `os.homedir()`. */
  readonly home?: string;
  /** How many levels under the home (and under a toolchain cache outside it) are walked. Default {@link HOME_DEPTH}. */
  readonly homeDepth?: number;
  /** Read every directory on every walk, keeping no listings between walks (see `ListingCache`). */
  readonly noCache?: boolean;
  /** Entries a tree walked whole must have for the tree index to be used for it. Default `INDEX_MIN_ENTRIES` (tree-index.ts). */
  readonly indexMinEntries?: number;
  /** Hidden matches past which they are grouped into directories hidden whole. Default {@link MAX_HIDDEN_MOUNTS}. */
  readonly maxHiddenMounts?: number;
  /**
   * How long before a scan a directory must have last changed for the scan to be given again while
   * nothing it listed changed (scan-reuse.ts). Default {@link REUSE_SETTLED_MS}; tests lower it
   * so that a scene made a moment ago is reused.
   */
  readonly reuseSettledMs?: number;
  /**
   * A file that keeps the reusable walks between processes (scan-reuse-file.ts): a one-shot process
   * (`aalis exec`) starts from the last one's walks, each still given again only while every
   * directory it listed is unchanged. In a directory no sandboxed command can write (the data
   * directory); used only when it is this user's alone. Not set: walks are kept in memory only.
   */
  readonly reuseFile?: string;
}

/**
 * Levels of the home walked for `.env*` and other pattern matches: `~/code/org/project/.env` is at
 * level 4. Deeper trees under the home that are not the workspace are not walked on every run
 * (a home holds caches and other checkouts of millions of files); the README gives the cost.
 */
export const HOME_DEPTH = 4;

/** Thrown when the host cannot be scanned within the limits: the policy is not translated. */
export class ScanLimitError extends AalisError<LinuxErrorCode> {
  override readonly name = 'ScanLimitError';
  constructor(
    readonly root: string,
    readonly limit: number,
  ) {
    super('scan-limit', `more than ${limit} entries under ${root}`);
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

/** One walk of the scan: a tree walked whole, a home or cache walked to a depth, or an ancestor listed alone. */
export interface ScanWalk {
  readonly root: string;
  readonly depth: number;
  readonly why: 'tree' | 'home' | 'ancestor';
}

/**
 * The roots walked whole: what the sandbox can write or read back, and the cwd (in the readonly
 * tier the workspace is no write root, yet its `.env` files must be hidden), less the toolchain
 * caches (content stores of millions of files, walked to the home's depth instead) and `/`.
 */
export function scanRoots(policy: SandboxPolicy, cwd?: string): string[] {
  const all = [...new Set([...policy.write, ...policy.readAllowWithin, ...(cwd ? [cwd] : [])])].filter((r) => r !== '/' && !isToolchainCache(r)).sort();
  return all.filter((r) => !all.some((o) => o !== r && isWithin(r, o)));
}

function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let p = path; p !== '/'; ) {
    p = p.slice(0, p.lastIndexOf('/')) || '/';
    out.push(p);
  }
  return out;
}

/**
 * Every walk of the scan, in the order taken: the trees walked whole ({@link scanRoots}); the
 * home, and the toolchain caches outside it, to `homeDepth` levels; every ancestor of those,
 * listed one level (a monorepo root's `.env`, `/home/.env`).
 */
export function scanWalks(policy: SandboxPolicy, cwd: string | undefined, options: ScanOptions = {}): ScanWalk[] {
  const trees = scanRoots(policy, cwd);
  const depth = options.homeDepth ?? HOME_DEPTH;
  const home = options.home ?? homedir();
  const shallow = [home, ...policy.write.filter(isToolchainCache)].filter((r) => r !== '/' && !trees.some((t) => isWithin(r, t)));
  const outer = [...new Set(shallow)].filter((r, _, all) => !all.some((o) => o !== r && isWithin(r, o)));
  const walks: ScanWalk[] = [...trees.map((root) => ({ root, depth: Number.POSITIVE_INFINITY, why: 'tree' as const })), ...outer.map((root) => ({ root, depth, why: 'home' as const }))];
  const covered = (p: string) => walks.some((w) => w.why !== 'ancestor' && isWithin(p, w.root) && p.split('/').length - w.root.split('/').length < w.depth);
  const ancestors = new Set<string>();
  for (const w of [...walks]) for (const a of ancestorsOf(w.root)) if (!covered(a)) ancestors.add(a);
  for (const root of [...ancestors].sort()) walks.push({ root, depth: 1, why: 'ancestor' });
  return walks;
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
 * Looks at the host for what the policy's rules need: kinds of named paths, pattern matches in the
 * walks of {@link scanWalks} (see {@link findPatternMatches}), and the host's unix sockets. `placeholders` are those of runs now
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
  const { found, matched, unreadable, danglingLinks, visited } = findPatternMatches(policy, options, placeholders, cwd);
  const indexGen = treeIndex()?.synced;
  return { kinds, found, matched, ...hostSocketFacts(), keepReadable: keepReadablePaths(), dangling, danglingLinks, unreadable, visited, ...(indexGen === undefined ? {} : { indexGen }) };
}

/**
 * The directories `{ path }` read-deny rules hide that are there, real directories (not symlinks),
 * and whose exceptions are all `{ path }` ones, with those exceptions: each is mounted over whole,
 * and what in it the rule covers is seen only through a named path mounted back (an exception, a
 * readable or writable root). An ancestor the rule covers is listed for its symlinks alone (a
 * matching one hides its target, wherever that is). An exception by pattern could put back an
 * entry only a full listing finds: such a rule's directory is listed as before.
 */
function sealedDirs(policy: SandboxPolicy): { readonly path: string; readonly excepts: readonly string[] }[] {
  const out: { path: string; excepts: string[] }[] = [];
  for (const r of policy.readDeny) {
    if (!('path' in r)) continue;
    const excepts = (r.except ?? []).flatMap((e) => ('path' in e ? [e.path] : []));
    if (excepts.length !== (r.except ?? []).length) continue;
    try {
      if (lstatSync(r.path, { throwIfNoEntry: false })?.isDirectory()) out.push({ path: r.path, excepts });
    } catch {
      // not reachable: nothing is skipped for it
    }
  }
  return out;
}

/** The names of `.env` files probed in an ancestor that cannot be listed (see {@link findPatternMatches}). */
const ENV_NAMES = NEW_ENTRY_NAMES.filter((n) => n.startsWith('.env'));

/** What {@link findPatternMatches} found. */
export interface PatternMatches {
  readonly found: FoundEntry[];
  /** Every matched path, also those grouped into a directory hidden whole. */
  readonly matched: string[];
  readonly unreadable: string[];
  /** Matching symlinks that lead nowhere (the commit protects the way they would resolve: landing-links.ts). */
  readonly danglingLinks: string[];
  readonly visited: number;
}

/**
 * The pattern half of {@link scanHost}: existing entries that a pattern rule or carve-out matches,
 * in every walk of {@link scanWalks}. The walk never follows a symlink (a matching one is reported
 * at its target, with the link as `via`), does not descend into a directory hidden whole, and
 * treats a directory it cannot list as hiding something: hidden whole (`hide`). An ancestor that
 * cannot be listed holds the workspace and cannot be hidden: its `.env` names are probed one by one.
 */
export function findPatternMatches(
  policy: SandboxPolicy,
  options: ScanOptions = {},
  skip: ReadonlySet<string> = new Set(),
  cwd?: string,
): PatternMatches {
  const patterns = matchers(policy).flatMap((m) => ('pattern' in m ? [{ pattern: m.pattern }] : []));
  if (patterns.length === 0) return { found: [], matched: [], unreadable: [], danglingLinks: [], visited: 0 };
  const any = ruleSet(patterns); // every pattern and carve-out at once; invalid ones throw before any walk
  const found: FoundEntry[] = [];
  const unreadable: string[] = [];
  // never replayed from a kept walk: a matching symlink keeps its walk and its directories from being kept
  const danglingLinks: string[] = [];
  let visited = 0;
  const cache = options.noCache ? undefined : listingCacheFor(JSON.stringify(patterns), (path) => any.covers(path));
  // each walk is given again while every directory it listed last time is unchanged (scan-reuse.ts),
  // kept in this thread's memory, and in a file for the next process when one is named
  const { reuseFile, ...keyed } = options;
  const reusable = (cache !== undefined || reuseFile !== undefined) && options.maxEntries === undefined;
  // Each process gets a session temp of its own (a random name), so a key with it would never be
  // met again by the next process: with a file, the key names it by a token (see sessionTmpToken)
  // and a walk that meets anything in the temp's parent is not kept.
  const tmpParent = reuseFile !== undefined && policy.tmp !== undefined && policy.tmp !== '/' ? dirname(policy.tmp) : undefined;
  const rawKey = reusable ? JSON.stringify([policy, cwd, keyed, options.home ?? homedir(), [...skip].sort()]) : '';
  const scanKey = tmpParent !== undefined ? sessionTmpToken(rawKey, policy.tmp!) : rawKey;
  if (reusable && reuseFile !== undefined) {
    lastReuseFileLoad = loadReuseFile(reuseFile, WalkMatchesSchema);
    if (lastReuseFileLoad.kind === 'loaded') reuse.adopt(lastReuseFileLoad.walks);
  }
  const settledNs = BigInt(options.reuseSettledMs ?? REUSE_SETTLED_MS) * 1_000_000n;
  const evaluator = policyEvaluatorOf(policy);
  const limit = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const walks = scanWalks(policy, cwd, options);
  // An ancestor that the rule of a directory a `{ path }` read-deny rule hides covers (the daemon's
  // data directory holds the workspace and every conversation's session temp) is listed for its
  // symlinks alone: that directory is a mount of its own (a tmpfs: translate.ts), so nothing in it
  // is seen but the named paths mounted back; a matching symlink in it still hides its target,
  // which may lie anywhere. Matching every entry found one per conversation, each then sent,
  // grouped and translated: 100,000 of them made every run_command 27 times slower.
  const sealed = sealedDirs(policy);
  const walkedWhole = new Set(walks.filter((w) => w.why !== 'ancestor').map((w) => w.root));
  const named = [...policy.write, ...policy.readAllowWithin, ...rules(policy).flatMap((r) => ('path' in r ? [r.path] : []))];
  const seen = new Set<string>();
  const add = (entry: FoundEntry) => {
    const f = mountable(entry);
    const key = f.via ?? f.path;
    if (seen.has(key)) return;
    seen.add(key);
    found.push(f);
  };
  // The trees walked whole are remembered per directory (tree-memo.ts) and a subtree the index
  // (tree-index.ts) says nothing happened in since is not walked again: its matches are replayed.
  const index = options.maxEntries === undefined && !options.noCache ? treeIndex() : undefined;
  const gen = index?.synced;
  const memo = gen === undefined ? undefined : treeMemoFor(JSON.stringify([policy, [...walkedWhole].sort()]));
  const walkKeys = new Set<string>();
  // With a file (a one-shot process, where a walk run again costs the most), a home walk that may
  // be kept is split: the home's own listing, then one walk per directory in
  // it (to the depth left), each kept on its own, so a program writing in one of them (its logs
  // under ~/.npm, say) makes only that part run again. The same directories are listed and the
  // same entries met as by one walk; only the order of the matches differs (per part).
  const queue: (ScanWalk & { readonly part?: 'head' | 'sub' })[] = walks.map((w) => (reusable && reuseFile !== undefined && w.why === 'home' && w.depth > 1 ? { ...w, part: 'head' as const } : w));
  for (let qi = 0; qi < queue.length; qi++) {
    const walk = queue[qi]!;
    const symlinksOnly = walk.why === 'ancestor' && sealed.some((d) => isWithin(walk.root, d.path) && !d.excepts.some((x) => isWithin(walk.root, x))) && evaluator.hidden(walk.root);
    const subWalks = (dirs: readonly string[]) => queue.splice(qi + 1, 0, ...dirs.map((root) => ({ root, depth: walk.depth - 1, why: walk.why, part: 'sub' as const })));
    const walkKey = createHash('sha256').update(`${scanKey}\0${walk.why}${walk.part ? `-${walk.part}` : ''}\0${walk.depth}\0${walk.root}`).digest('hex');
    walkKeys.add(walkKey);
    const kept = reusable ? reuse.get(walkKey, walk.root) : undefined;
    if (kept) {
      for (const f of kept.added) add(f); // in the order met, so the same ones win over later walks' as before
      visited += kept.visited;
      if (walk.part === 'head') subWalks(kept.descend ?? []);
      continue;
    }
    const descend: string[] = [];
    const witness = new ScanWitness(settledNs);
    if (tmpParent !== undefined && isWithin(walk.root, tmpParent)) witness.spoil();
    const added: FoundEntry[] = [];
    const addHere = (f: FoundEntry) => {
      added.push(f);
      add(f);
    };
    let met = 0;
    const tree = walk.why === 'tree' && memo !== undefined && gen !== undefined ? memo : undefined;
    const rec = tree?.recorder(gen!, (path) => index!.unchangedSince(path, tree.genOf(path) ?? -1), add, (path) => unreadable.push(path));
    if (rec) witness.spoil(); // the index answers for subtrees never listed here
    const found_ = rec ? rec.found : addHere;
    const visit = (e: WalkEntry): boolean => {
      met += 1;
      if (met > limit) throw new ScanLimitError(walk.root, limit);
      if (skip.has(e.path)) {
        witness.spoil();
        rec?.volatile(); // another run's placeholder: what is here now is not what the memo may keep
        return false;
      }
      if (tmpParent !== undefined && isWithin(e.path, tmpParent)) witness.spoil(); // the session temp's siblings (and it): the key does not name it
      if (symlinksOnly && e.type !== 'symlink') return false; // under the sealed directory's mount, or a named path mounted back
      const hit = any.covers(e.path);
      if (e.type === 'symlink') {
        if (hit) {
          witness.spoil(); // its target may change outside every directory listed
          rec?.volatile(); // its target is looked up each time: it may change outside the tree
          const real = realTarget(atFd(e.dirFd, e.name));
          if (real) found_({ path: real.path, kind: real.kind, via: e.path });
          else danglingLinks.push(e.path);
        }
        return false;
      }
      if (hit) found_({ path: e.path, kind: e.type === 'dir' ? 'dir' : 'file' });
      if (e.type !== 'dir' || walkedWhole.has(e.path)) return false; // a root of its own walk
      // hidden whole: nothing under it is visible, unless a named path (a carve-out, a root) is mounted back
      const into = !(evaluator.hidden(e.path) && !named.some((n) => n !== e.path && isWithin(n, e.path)));
      if (into && walk.part === 'head') descend.push(e.path); // walked next, as a part of its own
      return into;
    };
    // a tree the index trusts needs no kept listings (the memo answers for what did not change,
    // and what changed is read again anyway): they are dropped, which is most of the memory
    const trusted = rec !== undefined && index!.isReady(walk.root);
    if (trusted) cache?.dropUnder(walk.root);
    const counted = walkTree(
      walk.root,
      {
        entry: visit,
        ...(reusable ? { listed: witness.listed } : {}),
        unreadable: (path) => {
          witness.spoil(); // what it holds, or may be probed in it, has no stamp here
          if (path === walk.root && walk.why === 'ancestor') {
            unreadable.push(path);
            for (const n of ENV_NAMES) {
              const k = kindOf(`${path === '/' ? '' : path}/${n}`);
              if (k) addHere({ path: `${path === '/' ? '' : path}/${n}`, kind: k });
            }
          } else if (rec) rec.unreadable(path);
          else {
            unreadable.push(path);
            addHere({ path, kind: 'dir', hide: true });
          }
        },
        ...(rec ? { reuse: rec.reuse, entered: rec.entered, left: rec.left } : {}),
      },
      walk.part === 'head' ? 1 : walk.depth,
      trusted || symlinksOnly ? undefined : cache, // the cache matches every entry it keeps: for symlinks alone, a plain listing
    );
    visited += counted;
    if (walk.why === 'tree' && counted >= (options.indexMinEntries ?? INDEX_MIN_ENTRIES)) witness.spoil(); // the index's (tree-index.ts)
    if (reusable) reuse.set(walkKey, witness, { added, visited: counted, ...(walk.part === 'head' ? { descend } : {}) });
    if (walk.part === 'head') subWalks(descend);
    // a large tree is watched from now on (tree-index.ts); the host thread syncs before its next walks
    if (walk.why === 'tree' && counted >= (options.indexMinEntries ?? INDEX_MIN_ENTRIES) && options.maxEntries === undefined && !options.noCache) treeIndex()?.watch(walk.root);
  }
  const stale = lastReuseFileLoad?.kind === 'loaded' && lastReuseFileLoad.walks.some((w) => !walkKeys.has(w.key)); // another scan's walks
  if (reusable && reuseFile !== undefined && (reuse.dirty || stale)) storeReuseFile(reuseFile, reuse.persisted(walkKeys)); // this scan's walks only: a small file, read whole by the next process
  const keepVisible = [...named, ...(cwd ? [cwd] : [])];
  return { found: groupHidden(found, evaluator, keepVisible, options.maxHiddenMounts ?? MAX_HIDDEN_MOUNTS), matched: [...seen], unreadable, danglingLinks, visited };
}

/**
 * A scan's key with the session temp `tmp` (as written, and as escaped in a pattern) replaced by one
 * token, so that the next process, whose temp has another name, meets the same key. Sound for a
 * walk that meets nothing at or under the temp's parent (the other walks are not kept): for any
 * other path `p` every rule answers alike whichever name the temp has. A `{ path }` rule, a root
 * or `readAllowWithin` entry at the temp covers `p` only if `p` is under the temp, and is under `p`
 * exactly when the temp's parent is (two names in one directory); the patterns name the temp as a
 * prefix (`^(?:…|<tmp>)/…`), which only a path under it matches.
 */
export function sessionTmpToken(key: string, tmp: string): string {
  const token = '\u0000session-tmp\u0000';
  let out = key;
  for (const form of new Set([tmp, escapePattern(tmp)])) out = out.split(JSON.stringify(form).slice(1, -1)).join(token);
  return out;
}

/** One walk's share of a scan, as kept for reuse: what it found, in order, and the entries it counted. */
interface WalkMatches {
  readonly added: readonly FoundEntry[];
  readonly visited: number;
  /** A home's own listing: the directories in it walked next, each as a part of its own. */
  readonly descend?: readonly string[];
}

/** A kept walk's value as read back from a file (scan-reuse-file.ts). */
const WalkMatchesSchema: z.ZodType<WalkMatches> = z.object({
  added: z.array(z.object({ path: z.string().startsWith('/'), kind: z.enum(['dir', 'file']), via: z.string().startsWith('/').optional(), hide: z.literal(true).optional() })),
  visited: z.number().int().nonnegative(),
  descend: z.array(z.string().startsWith('/')).optional(),
});

/** Walks of pattern scans on this thread, kept for reuse (by scan and walk). */
const reuse = new ScanReuse<WalkMatches>();

let lastReuseFileLoad: ReuseFileLoad<WalkMatches> | undefined;

/** Forgets this thread's kept walks, as a new process starts with none (for tests of {@link ScanOptions.reuseFile}). */
export function forgetKeptScans(): void {
  reuse.clear();
  reuse.persisted(); // nothing to write: the file is not this thread's to empty
  lastReuseFileLoad = undefined;
}

/** What this thread's last scan with a {@link ScanOptions.reuseFile} made of the file (for tests and the report). */
export function lastReuseFile(): ReuseFileLoad<WalkMatches> | undefined {
  return lastReuseFileLoad;
}

/** Bytes a mount point's path may have: bubblewrap prefixes it (`/newroot`), and the kernel's PATH_MAX is 4096 with the NUL. */
export const MAX_MOUNT_PATH = 4000;

/**
 * A match too long for a mount point (deeper than PATH_MAX) cannot be hidden by its own mount:
 * its deepest ancestor that can be mounted is hidden whole instead (stricter, so fail closed).
 */
function mountable(f: FoundEntry): FoundEntry {
  if (encodePath(f.path).length <= MAX_MOUNT_PATH) return f;
  let p = f.path;
  while (encodePath(p).length > MAX_MOUNT_PATH) p = p.slice(0, p.lastIndexOf('/'));
  return { path: p, kind: 'dir', hide: true, via: f.via ?? f.path };
}

/** The real path and kind behind a matching symlink; undefined when it leads nowhere this process can reach. */
function realTarget(link: Buffer): { path: string; kind: EntryKind } | undefined {
  try {
    const real = realpathSync.native(link, { encoding: 'buffer' });
    const st = statSync(real);
    return { path: decodeName(real), kind: st.isDirectory() ? 'dir' : 'file' };
  } catch (e) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES'].includes((e as NodeJS.ErrnoException).code ?? '')) return undefined; // dangling: nothing behind it to read or write through
    throw e;
  }
}
