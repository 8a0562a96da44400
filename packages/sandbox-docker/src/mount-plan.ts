import { lstatSync, } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { type PathRule, patternLiteral, patternShadowedBy, type SandboxPolicy } from '@aalis/api-reach';
import { encodePath, GIT_DIR_MARK_NAMES, hasRawBytes, type LandingRule, landingExtraRules, shownBytes, takenForGitDir, utf8NameOf } from '@aalis/core';
import { walk, type WalkEntry, walkRoot } from './host-walk.js';
import { MountPolicyError } from './mount-policy-error.js';
import { patternNamedOutside, protectedAliases } from './hard-link-aliases.js';
import { newRepositoryVerdict } from './new-repository.js';
import { openUpOwnDir } from './own-dirs.js';
import { isWithin, rulesCover } from './rule-match.js';

/** What a path is in the container: hidden, readable, or readable and writable. */
export type MountMode = 'masked' | 'ro' | 'rw';

/** One mount of a container, at the same path as on the engine's host. */
export type ContainerMount =
  | { readonly kind: 'bind'; readonly path: string; readonly readOnly: boolean }
  /** An empty read-only tmpfs over a directory the policy hides. */
  | { readonly kind: 'mask-dir'; readonly path: string }
  /** `/dev/null` over a file the policy hides. */
  | { readonly kind: 'mask-file'; readonly path: string };

/** Targets a container never gets from the host: the root and the kernel's own trees. */
export const NEVER_MOUNT_TARGETS = ['/', '/proc', '/sys', '/dev'] as const;

/** Where the engine's socket and state usually live; never mounted, nor anything holding them. */
export const ENGINE_PATHS = ['/var/run/docker.sock', '/run/docker.sock', '/run/docker', '/var/lib/docker', '/run/containerd', '/var/run/docker'] as const;

/** What a policy becomes on the engine's host. */
export interface MountPlan {
  /** The real working directory, the container's workdir. */
  readonly cwd: string;
  /** Every root the plan mounts under, as it resolved them (the cwd, write roots, readable roots). */
  readonly roots: readonly string[];
  readonly mounts: readonly ContainerMount[];
  /** Whether the container gets its own tmpfs `/tmp` (not when the policy mounts the host's `/tmp`). */
  readonly tmpfsTmp: boolean;
  /** Mounted writable roots, for the post-run check of writes the mounts could not stop. */
  readonly writableRoots: readonly string[];
  /**
   * The denied entries under writable roots that were there before the run, by their identity
   * (`dev:ino:birth time`), with their path's bytes. After the run, a denied entry counts as there
   * before only when the same file stands at the same path: another container's landing, not yet
   * removed by its own check when this plan was made, and written again by this command at the
   * same path once it was, was kept when the plan knew paths only (found by an attack: 5 of 5). One
   * the command only moved (`mv cfg cfg2` carries `cfg/.env` to `cfg2/.env`, same identity, the old
   * path gone) is not a write it made either: before, the check removed such a `.env`, `AGENTS.md`
   * or a nested repo's whole `.git` as new (found by an attack: every such `mv` lost the user's files).
   */
  readonly deniedInodes: ReadonlyMap<string, readonly Buffer[]>;
  /**
   * git's marks (`HEAD`, `objects`, `refs`, `commondir`) outside a `.git` under the writable roots
   * before the run, by identity (a rename keeps it: a bare repository the command only moved is
   * the person's, found by an attack, h112: `mv mirror.git mirror2.git` lost its objects): the
   * check after it refuses the new ones that complete a folder git would take for a repository
   * ({@link deniedWritesAfter}).
   */
  readonly marksBefore: ReadonlySet<string>;
  /**
   * The paths the rules name that the command may not write or read, under the writable roots,
   * and the policy with the extra landings, whose deny patterns are asked too: a symlink the
   * command made above such a name (or where a pattern's matches go through it) sends that name
   * where the link points, a write to it.
   */
  readonly shadowable: { readonly named: readonly string[]; readonly patterns: SandboxPolicy };
  /** Folders the host's landings protect whole, each with why (an `.envrc` that cannot be read, say): said with what is removed there. */
  readonly protectedWhole: ReadonlyMap<string, string>;
  /**
   * The landings only the host tells, read again from what stands after the run (`candidates`:
   * the `.git`, `.envrc` and `HEAD` entries and protected links the check met, none of them a
   * write it removes): the rules the plan did not have. A command that moved a nested repository
   * (`mv sub sub3`) took its hooks folder to a place the plan's rules did not name.
   */
  landingsAfter(candidates: readonly string[]): LandingRule[];
  /** When the plan was made (ms since the epoch): an entry born or modified since is the run's. */
  readonly plannedAt: number;
  /** The mode of any path under the mounted roots. */
  modeAt(path: string): MountMode;
  /**
   * Whether the container could not see into the directory walked as `entry`: outside every root,
   * or a folder the plan masked, known by its identity (a mask moves with a folder renamed above
   * it: `mv cfg cfg2` carries `cfg/.env.d`'s, and by path the check walked into the person's
   * secrets there and removed what it took for writes, found by an attack, h120; a new folder made
   * at the old path is no masked one). A name the read rules hide that did not exist at the plan
   * (a new `.env.d`) got no mask, so what the command wrote there is on the host and is checked like
   * any other write (found by an attack, h116: an `.envrc`, a hook and a virtualenv's `activate`
   * under a new `.env*` folder stayed, the check's walk having stopped where `modeAt` said masked).
   */
  hiddenAt(entry: { readonly path: string; readonly bytes: Buffer }): boolean;
  /** Whether the write layers allow a path, regardless of whether it can be read. */
  writableAt(path: string): boolean;
}

/** What to plan mounts from. All paths are real paths on the engine's host. */
export interface MountPlanInput {
  readonly policy: SandboxPolicy;
  readonly cwd: string;
  /** Readable roots besides the cwd and the policy's (toolchains, tool binaries). */
  readonly readRoots?: readonly string[];
  /** Paths that are never mounted, nor any root holding or under them: the daemon's own root, the engine socket. */
  readonly neverMount?: readonly string[];
  /** Most directory entries walked under the roots; past it the plan fails closed. */
  readonly walkLimit?: number;
}

const DEFAULT_WALK_LIMIT = 200_000;

/** A name no rule is about, to ask what a new entry in a folder would be. */
const PROBE_CHILD = '.aalis-probe-of-a-new-name';

async function realOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/**
 * Refuses a policy's root that is there but no longer is its own real path (it, or a directory
 * above it, was swapped for a symlink after the policy judged it). Mounting where it points now
 * would give the container a place nobody judged: a pod task that turned another task's `work/`
 * into a symlink sent that task's writes into the owner's workspace. The Linux sandbox refuses
 * the same (its mounts never follow a symlink). The engine resolves the path again when it
 * creates the container: a swap between this check and then is not seen.
 */
async function refuseMoved(path: string, what: string): Promise<void> {
  const real = await realOrUndefined(path);
  if (real === undefined || real === path) return;
  throw new MountPolicyError(
    'moved',
    `${what} ${path} now resolves to ${real}: it, or a directory above it, is a symlink, and the policy judged ${path}, not where it points; nothing was run`,
    'run the command again (the policy is made anew from the real path), or put the directory back where the policy named it',
  );
}

function uniqueSorted(paths: Iterable<string>): string[] {
  return [...new Set(paths)].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

function rulePaths(rules: readonly PathRule[]): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    if ('path' in rule) out.push(rule.path);
    for (const carveOut of rule.except ?? []) if ('path' in carveOut) out.push(carveOut.path);
  }
  return out;
}


/** The docker engine takes mount paths as JSON text: a path that is not UTF-8 cannot be masked or bound. */
function notUtf8Mount(entry: WalkEntry, mode: MountMode): MountPolicyError {
  return new MountPolicyError(
    'not-utf8',
    `${shownBytes(entry.bytes)} needs its own ${mode === 'masked' ? 'mask (the policy hides it)' : 'mount'} in the container, but its path is not UTF-8 and the docker engine takes mount paths only as UTF-8 text; nothing was run`,
    'rename the directory or file on the way to a UTF-8 name (mv with a glob), or run the command with the Linux sandbox',
  );
}

/** Linux's PATH_MAX: no call takes a longer path, a mount's target included. */
const PATH_MAX = 4096;

/** A directory the walk could not list because its path is past PATH_MAX: it cannot be masked either. */
function unlistedTooDeep(dir: WalkEntry): MountPolicyError {
  return new MountPolicyError(
    'unlisted',
    `${shownBytes(dir.bytes).slice(0, 200)}… (${dir.bytes.length} bytes) lies deeper than PATH_MAX (${PATH_MAX} bytes), so what it holds cannot be checked against the deny rules, and it cannot be hidden by a mount either; nothing was run`,
    'move or shorten the deep tree (its files stay readable in the container otherwise), or run the command with the Linux sandbox, whose scan reaches any depth',
  );
}

/** Records a denied entry's identity (hard links: one file at several denied paths, each of them there before). */
function noteDenied(deniedInodes: Map<string, Buffer[]>, bytes: Buffer): void {
  const inode = inodeKeyOf(bytes);
  if (inode === undefined) return;
  const paths = deniedInodes.get(inode) ?? [];
  if (!paths.some((p) => p.equals(bytes))) deniedInodes.set(inode, [...paths, bytes]);
}

/** Whether a walked entry is one the host's landings are read from: a `.git`, an `.envrc`, a `HEAD` outside a `.git`, or a symlink the policy protects. */
function isExtraCandidate(entry: WalkEntry, protectedNow: boolean): boolean {
  const name = basename(entry.path);
  const named = name === '.git' || name === '.envrc' || (name === 'HEAD' && !entry.path.includes('/.git/'));
  return named || (entry.isSymbolicLink && protectedNow);
}

/** {@link isExtraCandidate}, refusing the run for one whose path is not UTF-8. */
function extraCandidate(entry: WalkEntry, protectedNow: boolean): boolean {
  if (!isExtraCandidate(entry, protectedNow)) return false;
  // what it says cannot be read by a name that is not text: refused, as a mount there is
  if (!entry.utf8) {
    throw new MountPolicyError(
      'not-utf8',
      `${shownBytes(entry.bytes)} decides where a host tool's start files are (a repository, an .envrc or a landing link), but its path is not UTF-8, so what it names cannot be read and protected here; nothing was run`,
      'rename the directory on the way to a UTF-8 name (mv with a glob), or run the command with the Linux sandbox',
    );
  }
  return true;
}

/**
 * Whether a path is one of git's marks in a folder that is no git directory of git's own making:
 * anywhere but a `.git` itself, a linked worktree's `.git/worktrees/<name>` and a submodule's
 * `.git/modules/…` (a folder of that shape made inside `.git` and reached by a symlink from the
 * workspace is the same disguise, found by an attack, h112).
 */
function isGitMark(path: string): boolean {
  if (!(GIT_DIR_MARK_NAMES as readonly string[]).includes(basename(path))) return false;
  const dir = dirname(path);
  return basename(dir) !== '.git' && !/\/\.git\/(?:worktrees\/[^/]+|modules\/.*)$/.test(dir);
}

/** A mark's key in {@link MountPlan.marksBefore}: its identity. */
function markKeyOf(bytes: Buffer): string | undefined {
  return inodeKeyOf(bytes);
}

/** core's landingExtraRules for what the walk found, with the folders protected whole. */
function landingExtrasOf(candidates: readonly string[], writeRoots: readonly string[], named: readonly string[], protectedPath: (path: string) => boolean): { rules: LandingRule[]; whole: Map<string, string> } {
  const whole = new Map<string, string>();
  const inRoot = (p: string) => writeRoots.some((root) => p !== root && isWithin(p, root));
  const rules = landingExtraRules({ write: writeRoots, inRoot, candidates: [...candidates, ...named], protectedPath, said: (folder, why) => whole.set(folder, why) });
  return { rules, whole };
}

/** A rule's identity, to tell the rules read after a run from the plan's. */
function ruleKey(rule: LandingRule): string {
  return 'path' in rule ? `p:${rule.path}` : `r:${rule.pattern}`;
}

/** The folder a pattern's matches all lie in: its literal when that ends a name, else the literal's folder. */
function literalFolder(literal: string, whole: boolean): string {
  if (whole) return literal;
  return literal.includes('/') ? literal.slice(0, literal.lastIndexOf('/')) || '/' : '/';
}

/**
 * Where each extra rule can hold entries under the writable roots: a path rule's path (or the
 * roots it holds), a pattern's literal folder; a pattern that is one name exactly (a link's way)
 * stands for that entry alone. Nested scopes are walked once, from the top.
 */
function extraScopes(rules: readonly LandingRule[], writeRoots: readonly string[]): { path: string; exact: boolean }[] {
  const out: { path: string; exact: boolean }[] = [];
  const scopeOf = (p: string) => {
    const held = writeRoots.filter((root) => isWithin(root, p));
    if (held.length > 0) for (const root of held) out.push({ path: root, exact: false });
    else if (writeRoots.some((root) => isWithin(p, root))) out.push({ path: p, exact: false });
  };
  for (const rule of rules) {
    if ('path' in rule) {
      scopeOf(rule.path);
      continue;
    }
    const { literal, exact, whole } = patternLiteral(rule.pattern);
    if (exact) {
      if (writeRoots.some((root) => isWithin(literal, root))) out.push({ path: literal, exact: true });
    } else scopeOf(literalFolder(literal, whole));
  }
  const sorted = [...new Map(out.map((s) => [`${s.exact ? 1 : 0}${s.path}`, s])).values()].sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // shallowest first; one below a folder already walked is left out (found by going up its names)
  const walked = new Set<string>();
  const walkedAbove = (path: string) => {
    for (let d = path; ; d = dirname(d)) {
      if (walked.has(d)) return true;
      if (d === dirname(d)) return false;
    }
  };
  return sorted.filter((s) => {
    if (walkedAbove(s.path)) return false;
    if (!s.exact) walked.add(s.path);
    return true;
  });
}

/** A scope's entry as the walk would give it, not following a link; undefined when there is none. */
async function scopeEntry(path: string): Promise<WalkEntry | undefined> {
  // by its bytes: a rule read from a host file names a name that is not UTF-8 as core's decodeName
  // does, and as text node would look up U+FFFD instead (found by an attack, h120: such a hooks
  // folder got no mount, and the check then removed the person's hooks there at every run)
  const bytes = encodePath(path);
  const st = await lstat(bytes).catch(() => undefined);
  if (st === undefined) return undefined;
  return { path, bytes, utf8: !hasRawBytes(path), isDirectory: st.isDirectory(), isSymbolicLink: st.isSymbolicLink() };
}

/**
 * Translates a policy into container mounts, in the policy's layer order: reads are what is
 * mounted, minus `readDeny` (masked), plus `readAllowWithin`; writes are the `write` roots, minus
 * `writeDeny`, plus `writeExceptions`, minus `controlDeny`. A path the layers decide differently
 * from its parent gets its own mount, so deeper mounts carry the later layers. Throws
 * {@link MountPolicyError} for anything it cannot mount safely.
 */
export async function planMounts(input: MountPlanInput): Promise<MountPlan> {
  const { policy } = input;
  const plannedAt = Date.now();
  const cwd = await realOrUndefined(input.cwd);
  if (cwd === undefined) {
    throw new MountPolicyError('cwd', `the working directory ${input.cwd} does not exist`, 'run the command in an existing directory');
  }
  const writeRoots = uniqueSorted((await Promise.all(policy.write.map(realOrUndefined))).filter((p) => p !== undefined));
  const allowBack = uniqueSorted((await Promise.all(policy.readAllowWithin.map(realOrUndefined))).filter((p) => p !== undefined));
  const readRoots = (await Promise.all((input.readRoots ?? []).map(realOrUndefined))).filter((p) => p !== undefined);
  const roots = uniqueSorted([cwd, ...writeRoots, ...allowBack, ...readRoots]);

  const neverMount = uniqueSorted([...ENGINE_PATHS, ...(input.neverMount ?? [])]);
  for (const root of roots) {
    if ((NEVER_MOUNT_TARGETS as readonly string[]).includes(root)) {
      throw new MountPolicyError('never-mount', `${root} cannot be mounted into a container`, 'use a narrower directory as the workspace or readable root');
    }
    const clash = neverMount.find((p) => isWithin(root, p) || isWithin(p, root));
    if (clash !== undefined) {
      throw new MountPolicyError(
        'never-mount',
        `${root} cannot be mounted into a container: it is or holds ${clash} (the engine socket and the daemon's own files are never mounted)`,
        'use a directory outside the daemon and the engine as the workspace',
      );
    }
  }

  // after the never-mount check, which names the reason better where both hold (/var/run)
  for (const root of policy.write) await refuseMoved(root, 'the writable root');

  const writeDenyRules = [...policy.writeDeny, ...policy.controlDeny];
  const readDenied = rulesCover(policy.readDeny);
  // the policy's; with the landings only the host tells (landingExtrasOf) once the walk has found them
  let writeDenied = rulesCover(policy.writeDeny);
  const writeExcepted = rulesCover(policy.writeExceptions);
  let controlDenied = rulesCover(policy.controlDeny);
  // writable names of a protected file's other hard links (found below, once the walks are done)
  const aliases = new Set<string>();
  const writableAt = (path: string): boolean => {
    if (aliases.has(path)) return false;
    let writable = writeRoots.some((root) => isWithin(path, root));
    if (writable && writeDenied(path)) writable = false;
    if (!writable && writeExcepted(path)) writable = true;
    if (writable && controlDenied(path)) writable = false;
    return writable;
  };
  // directories the walk could not list: what they hold was not checked, so they are hidden whole
  const unlistedDirs: string[] = [];
  const modeAt = (path: string): MountMode => {
    if (!roots.some((root) => isWithin(path, root))) return 'masked';
    if (unlistedDirs.some((dir) => isWithin(path, dir))) return 'masked';
    if (readDenied(path) && !allowBack.some((root) => isWithin(path, root))) return 'masked';
    return writableAt(path) ? 'rw' : 'ro';
  };
  // A folder the rules deny by its name alone (a new name in it may be written: a repository's
  // `.git`, a linked worktree's `.git/worktrees/<name>`) is mounted read-write onto itself: what is
  // in it is the command's to write (a read-only one refused every commit in a linked worktree,
  // found by an attack, h112), and a mount point cannot be moved or removed (with no mount at
  // all, `mv .git` took the repository's relative hooks path elsewhere, h114).
  const nameOnly = (path: string, isDir: boolean): boolean => isDir && modeAt(path) === 'ro' && writableAt(`${path}/${PROBE_CHILD}`);
  const mountModeAt = (path: string, isDir: boolean): MountMode => (nameOnly(path, isDir) ? 'rw' : modeAt(path));

  const baseRoots = roots.filter((root) => !roots.some((other) => other !== root && isWithin(root, other)));
  const candidates = new Set<string>(roots);
  const kinds = new Map<string, 'dir' | 'file'>();
  const allRules = [...policy.readDeny, ...writeDenyRules, ...policy.writeExceptions];
  for (const path of rulePaths(allRules)) {
    if (!baseRoots.some((root) => isWithin(path, root))) continue;
    const stat = await lstat(encodePath(path)).catch(() => undefined);
    if (stat === undefined || stat.isSymbolicLink()) continue;
    if (hasRawBytes(path)) throw notUtf8Mount({ path, bytes: encodePath(path), utf8: false, isDirectory: stat.isDirectory(), isSymbolicLink: false }, 'ro');
    candidates.add(path);
    kinds.set(path, stat.isDirectory() ? 'dir' : 'file');
  }

  // Pattern rules name no path, so every entry under the roots is checked: an entry whose mode
  // differs from its directory's is a boundary and gets a mount. The same walk notes which denied
  // paths under writable roots exist before the run.
  const deniedInodes = new Map<string, Buffer[]>();
  // Unix sockets under the roots that the policy does not name (`unixSockets`): a bind mount shows
  // a socket like any file, and connecting to it works even through a read-only mount, so each is
  // masked. Before, the docker backend left every socket in a mounted folder reachable (a
  // database's socket in a project, say) where the Linux sandbox refused the same connection
  // (found by an attack). Always walked for them; a socket bound after the walk is not masked.
  const socketsAllowed = (path: string) => policy.unixSockets.some((dir) => isWithin(path, dir));
  const sockets: WalkEntry[] = [];
  const inWriteRoot = (path: string) => writeRoots.some((w) => isWithin(path, w));
  // what the landings the host tells are read from (extraCandidate), and git's marks outside a .git there now
  const extraCandidates: WalkEntry[] = [];
  const marksBefore = new Set<string>();
  {
    const budget = { left: input.walkLimit ?? DEFAULT_WALK_LIMIT };
    const dirModes = new Map<string, MountMode>();
    const modeOfDir = (dir: string): MountMode => {
      let mode = dirModes.get(dir);
      if (mode === undefined) {
        mode = mountModeAt(dir, true);
        dirModes.set(dir, mode);
      }
      return mode;
    };
    for (const root of baseRoots) {
      await walk(walkRoot(root), budget, (entry) => {
        const { path } = entry;
        const writeRooted = inWriteRoot(path);
        if (!writableAt(path) && writeRooted) noteDenied(deniedInodes, entry.bytes);
        if (writeRooted && extraCandidate(entry, !writableAt(path) || readDenied(path))) extraCandidates.push(entry);
        if (writeRooted && isGitMark(path)) marksBefore.add(markKeyOf(entry.bytes) ?? '');
        if (entry.isSymbolicLink) return false;
        if (entry.isSocket && !socketsAllowed(path)) sockets.push(entry);
        const mode = mountModeAt(path, entry.isDirectory);
        if (mode !== modeOfDir(dirname(path)) || nameOnly(path, entry.isDirectory)) {
          if (!entry.utf8) throw notUtf8Mount(entry, mode);
          candidates.add(path);
          kinds.set(path, entry.isDirectory ? 'dir' : 'file');
        }
        return mode !== 'masked';
      }, (dir) => {
        // a .env (or anything the rules deny) below it would be readable in the container: hidden
        // whole, as the Linux sandbox hides what its scan cannot list; a mask needs a mountable path
        if (!dir.utf8) throw notUtf8Mount(dir, 'masked');
        if (dir.bytes.length >= PATH_MAX) throw unlistedTooDeep(dir);
        unlistedDirs.push(dir.path);
        candidates.add(dir.path);
        kinds.set(dir.path, 'dir');
      });
    }
  }

  // Phase two: the landings only the host tells (a nested repository's hooks folder, what an
  // .envrc loads, a landing symlink's way and target: core's landingExtraRules, the Linux commit's
  // by the same code), added to the write denials; where they name what is there, the plan is
  // redone below them. Before, the docker backend judged by the policy alone, and each of these
  // took a command's write (found by an attack, h111: 13 of 17).
  const extras = landingExtrasOf(extraCandidates.map((e) => e.path), writeRoots, [...rulePaths(writeDenyRules)], (p) => !writableAt(p) || readDenied(p));
  if (extras.rules.length > 0) {
    writeDenied = rulesCover([...policy.writeDeny, ...extras.rules.filter((r) => r.strict !== true)]);
    // a strict one (a typed command's name in a node_modules/.bin on PATH) beats the node_modules write exception, as the control plane does
    const strict = extras.rules.filter((r) => r.strict === true);
    if (strict.length > 0) controlDenied = rulesCover([...policy.controlDeny, ...strict]);
    const dirModes = new Map<string, MountMode>();
    const budget = { left: input.walkLimit ?? DEFAULT_WALK_LIMIT };
    for (const scope of extraScopes(extras.rules, writeRoots)) {
      const entry = await scopeEntry(scope.path);
      if (entry === undefined) continue;
      if (entry.isSymbolicLink || (scope.exact && entry.isDirectory)) {
        // a name a landing link resolves through: only that name is the landing's (what is in it
        // stays the command's), so it gets no mount; replacing it is a write the check finds. A
        // file named exactly (a git directory's config) is the landing itself, mounted read-only.
        noteDenied(deniedInodes, entry.bytes);
        continue;
      }
      noteDenied(deniedInodes, entry.bytes);
      if (!entry.utf8) throw notUtf8Mount(entry, mountModeAt(scope.path, entry.isDirectory));
      candidates.add(scope.path);
      kinds.set(scope.path, entry.isDirectory ? 'dir' : 'file');
      if (!entry.isDirectory) continue;
      await walk(entry, budget, (child) => {
        if (!writableAt(child.path)) noteDenied(deniedInodes, child.bytes);
        if (child.isSymbolicLink) return false;
        const mode = mountModeAt(child.path, child.isDirectory);
        const parentMode = dirModes.get(dirname(child.path)) ?? mountModeAt(dirname(child.path), true);
        dirModes.set(dirname(child.path), parentMode);
        if (mode !== parentMode || nameOnly(child.path, child.isDirectory)) {
          if (!child.utf8) throw notUtf8Mount(child, mode);
          candidates.add(child.path);
          kinds.set(child.path, child.isDirectory ? 'dir' : 'file');
        }
        return mode !== 'masked';
      });
    }
  }

  // Phase three: a protected file with other hard links (`ln scripts/pre-commit .git/hooks/pre-commit`)
  // is written through any writable one of them in place, past its read-only mount (found by an
  // attack, h116: a hook and a config changed that way, and the check kept them: the same file at
  // the same path). Such names are found by identity and mounted read-only too; a name outside
  // every writable root cannot be written from the container at all.
  const outsideNamed = [...rulePaths(writeDenyRules), ...patternNamedOutside(writeDenyRules, inWriteRoot)].filter((p) => !inWriteRoot(p));
  for (const alias of await protectedAliases(deniedInodes, outsideNamed, writeRoots, input.walkLimit ?? DEFAULT_WALK_LIMIT, writableAt)) {
    if (!alias.utf8) throw notUtf8Mount(alias, 'ro');
    aliases.add(alias.path);
    noteDenied(deniedInodes, alias.bytes);
    candidates.add(alias.path);
    kinds.set(alias.path, 'file');
  }

  const mounts: ContainerMount[] = [];
  // by path: the deepest emitted mount above a path is found by going up its names (a search of
  // every one emitted made a plan of a thousand nested repositories take seconds, found by h112)
  const emitted = new Map<string, MountMode>();
  const parentOf = (path: string): { path: string; mode: MountMode } | undefined => {
    for (let d = dirname(path); ; d = dirname(d)) {
      const mode = emitted.get(d);
      if (mode !== undefined) return { path: d, mode };
      if (d === dirname(d)) return undefined;
    }
  };
  for (const path of uniqueSorted(candidates)) {
    const mode = mountModeAt(path, kinds.get(path) !== 'file');
    const parent = parentOf(path);
    if (parent?.mode === 'masked') {
      if (mode === 'masked') continue;
      throw new MountPolicyError(
        'reopen-under-mask',
        `${path} is readable again under ${parent.path}, which the policy hides; the docker sandbox cannot mount it there`,
        `make ${path} its own readable root outside ${parent.path}`,
      );
    }
    if (parent !== undefined && parent.mode === mode && !nameOnly(path, kinds.get(path) !== 'file')) continue;
    if (mode === 'masked') {
      const kind = kinds.get(path) ?? ((await lstat(path)).isDirectory() ? 'dir' : 'file');
      mounts.push(kind === 'dir' ? { kind: 'mask-dir', path } : { kind: 'mask-file', path });
    } else {
      mounts.push({ kind: 'bind', path, readOnly: mode === 'ro' });
    }
    emitted.set(path, mode);
  }

  // the masked folders by identity (see MountPlan.hiddenAt)
  const maskedDirs = new Set(mounts.flatMap((m) => (m.kind === 'mask-dir' ? [dirIdOf(Buffer.from(m.path))] : [])).filter((id): id is string => id !== undefined));
  for (const socket of sockets) {
    if (modeAt(socket.path) === 'masked') continue; // hidden with what holds it
    if (!socket.utf8) throw notUtf8Mount(socket, 'masked');
    mounts.push({ kind: 'mask-file', path: socket.path });
  }

  return {
    cwd,
    roots,
    mounts,
    tmpfsTmp: !roots.includes('/tmp'),
    writableRoots: writeRoots.filter((root) => modeAt(root) !== 'masked'),
    deniedInodes,
    marksBefore,
    protectedWhole: extras.whole,
    shadowable: {
      named: rulePaths([...policy.readDeny, ...writeDenyRules, ...extras.rules]).filter((p) => inWriteRoot(p) && (!writableAt(p) || readDenied(p))),
      patterns: { ...policy, writeDeny: [...policy.writeDeny, ...extras.rules] },
    },
    landingsAfter: (after) => {
      const known = new Set(extras.rules.map(ruleKey));
      return landingExtrasOf(after, writeRoots, [], (p) => !writableAt(p) || readDenied(p)).rules.filter((r) => !known.has(ruleKey(r)));
    },
    plannedAt,
    modeAt,
    hiddenAt: (entry) => {
      if (!roots.some((root) => isWithin(entry.path, root))) return true;
      if (maskedDirs.size === 0) return false;
      const id = dirIdOf(entry.bytes);
      // one that cannot be looked at is walked, and said unlisted where it cannot be (never passed over unsaid)
      return id !== undefined && maskedDirs.has(id);
    },
    writableAt,
  };
}

/** A write {@link deniedWritesAfter} found: its path as shown (`\xNN` for bytes that are not UTF-8) and its exact bytes. */
export interface DeniedWrite {
  readonly path: string;
  readonly bytes: Buffer;
}

/** What {@link deniedWritesAfter} found under the writable roots. */
export interface WritesAfter {
  /** Denied writes, topmost paths only. */
  readonly denied: readonly DeniedWrite[];
  /** Directories under the writable roots that could not be listed: what is in them was not checked. */
  readonly unlisted: readonly string[];
  /** Lines for the command's stderr: why a new repository it made was removed. */
  readonly notes?: readonly string[];
}

/**
 * Writes that landed where the policy denies them although the mounts allowed the parent (a
 * denied path that did not exist yet, or one only a pattern names): every entry under the
 * writable roots that is denied now and was not there before (compared by bytes). Topmost paths only.
 * Unbounded by default: the plan's walk limit bounds what a run may be started on, but after it the
 * command's writes are on the host and each must be judged, however many it made (a limit there
 * left a denied write in place behind a walk-limit error).
 */
export async function deniedWritesAfter(plan: MountPlan, walkLimit = Number.POSITIVE_INFINITY, options: { readonly newRepositories?: boolean } = {}): Promise<WritesAfter> {
  const denied: DeniedWrite[] = [];
  const unlisted: string[] = [];
  const notes: string[] = [];
  // `.git` folders the run made where the host had none, judged whole once the walk is done (new-repository.ts)
  const newRepos: WalkEntry[] = [];
  const budget = { left: walkLimit };
  // git's marks met outside a .git, by folder: the disguise is judged once the walk has seen them all
  const marks = new Map<string, WalkEntry[]>();
  // what the landings only the host tells are read from again, as things stand now
  const candidates: string[] = [];
  // the symlinks that stand where the command may write: one it made above a protected name moves that name
  const links: WalkEntry[] = [];
  const shown = (entry: WalkEntry): DeniedWrite => ({ path: entry.utf8 ? entry.path : shownBytes(entry.bytes), bytes: entry.bytes });
  const visit = (entry: WalkEntry): boolean => {
    if (!plan.writableAt(entry.path) && !thereBefore(plan, entry.bytes)) {
      if (options.newRepositories === true && mayBeNewRepository(plan, entry)) newRepos.push(entry);
      else denied.push(shown(entry));
      return false;
    }
    if (isExtraCandidate(entry, !plan.writableAt(entry.path))) {
      // one whose name is not text was not there before (the plan refused such a run): the command's, and unreadable here
      if (!entry.utf8) {
        denied.push(shown(entry));
        return false;
      }
      candidates.push(entry.path);
    }
    if (isGitMark(entry.path)) marks.set(dirname(entry.path), [...(marks.get(dirname(entry.path)) ?? []), entry]);
    if (entry.isSymbolicLink) links.push(entry);
    return !entry.isSymbolicLink && !(entry.isDirectory && plan.hiddenAt(entry));
  };
  const closed: WalkEntry[] = [];
  for (const root of plan.writableRoots) await walk(walkRoot(root), budget, visit, (dir) => closed.push(dir));
  // what could not be listed is judged all the same (found by an attack, h116: with a daemon that
  // is not root, `chmod 111 q` kept a new q/.envrc from the check, `chmod 311 .` the whole
  // workspace; renames of short names put a hook past PATH_MAX): a folder of the daemon's own is
  // opened to its owner again and walked (own-dirs.ts), one past PATH_MAX is the command's (the
  // plan refuses a run on such a tree) and removed whole; anything else is said unchecked
  for (let dir = closed.shift(); dir !== undefined; dir = closed.shift()) {
    const shownDir = dir.utf8 ? dir.path : shownBytes(dir.bytes);
    if (dir.bytes.length >= PATH_MAX) {
      denied.push(shown(dir));
      notes.push(`aalis: ${shownDir.slice(0, 200)}…: removed: the command put it past PATH_MAX (${PATH_MAX} bytes), where nothing in it can be named to be checked\n`);
      continue;
    }
    // only what the run made or changed (a mode change moves the ctime): a folder the person
    // closed is theirs, and stays as it is; one closed to search from above (`chmod 600 q`) is
    // reached by opening its parent first (found by an attack, h120)
    const parent = dir.bytes.subarray(0, Math.max(1, dir.bytes.lastIndexOf(0x2f)));
    const parentBefore = changedSince(parent, plan.plannedAt) ? openUpOwnDir(parent) : undefined;
    const before = changedSince(dir.bytes, plan.plannedAt) ? openUpOwnDir(dir.bytes) : undefined;
    if (before === undefined && parentBefore === undefined) {
      unlisted.push(shownDir);
      continue;
    }
    const opened = before !== undefined ? `this folder (mode ${before.toString(8).padStart(4, '0')})` : `the folder holding it (mode ${parentBefore!.toString(8).padStart(4, '0')})`;
    notes.push(`aalis: ${shownDir}: the command had closed ${opened} to its owner; its owner's bits were given back so what is in it could be checked\n`);
    await walk(dir, budget, visit, (inner) => closed.push(inner));
  }
  for (const entry of newRepos) {
    const verdict = await newRepositoryVerdict(entry, budget);
    if (verdict.inert) continue;
    denied.push(shown(entry));
    notes.push(`aalis: ${entry.path}: the new git repository the command made was removed (rule: landing): ${verdict.why}\n`);
  }
  for (const entry of disguiseMarks(plan, marks)) denied.push(shown(entry));
  const later = plan.landingsAfter(candidates);
  // by a set: a search of every denied entry for each was quadratic (found by an attack, h116:
  // 20 000 denied .envrc files held every container of the workspace paused for 10 s)
  const deniedKeys = new Set(denied.map((d) => d.bytes.toString('latin1')));
  const fresh = (entry: WalkEntry) => {
    const key = entry.bytes.toString('latin1');
    if (deniedKeys.has(key)) return false;
    deniedKeys.add(key);
    return true;
  };
  for (const entry of await writesUnderLaterLandings(plan, later, budget)) if (fresh(entry)) denied.push(shown(entry));
  for (const entry of shadowingLinks(plan, later, links)) if (fresh(entry)) denied.push(shown(entry));
  return { denied, unlisted, ...(notes.length > 0 ? { notes } : {}) };
}

/**
 * Whether a denied entry the run made is a `.git` folder that may be judged as a new repository:
 * one in a folder that may hold new names, neither hidden nor under a name that is not UTF-8.
 */
function mayBeNewRepository(plan: MountPlan, entry: WalkEntry): boolean {
  return entry.utf8 && entry.isDirectory && basename(entry.path) === '.git' && plan.modeAt(entry.path) !== 'masked' && plan.writableAt(`${dirname(entry.path)}/${PROBE_CHILD}`);
}

/**
 * The run's writes (born or modified since the plan) under the landings only the host tells that
 * the plan did not have ({@link MountPlan.landingsAfter}), topmost only. What stood there before
 * the run and was left as it was stays: a landing the command made by moving a repository is
 * judged by what it wrote there, not by what the person had.
 */
async function writesUnderLaterLandings(plan: MountPlan, later: readonly LandingRule[], budget: { left: number }): Promise<WalkEntry[]> {
  if (later.length === 0) return [];
  const covers = rulesCover(later);
  const out: WalkEntry[] = [];
  const judge = (entry: WalkEntry): boolean => {
    if (covers(entry.path) && madeSince(entry.bytes, plan.plannedAt)) {
      out.push(entry);
      return false;
    }
    return !entry.isSymbolicLink && !(entry.isDirectory && plan.hiddenAt(entry));
  };
  for (const scope of extraScopes(later, plan.writableRoots)) {
    const entry = await scopeEntry(scope.path);
    if (entry === undefined || !judge(entry) || !entry.isDirectory || scope.exact) continue;
    await walk(entry, budget, judge);
  }
  return out;
}

/**
 * Whether the entry at `path` was born at or after `since` (ms), or, not being a directory,
 * changed since (its ctime: written, renamed, its mode set; a command sets the modification time
 * back with `touch -d`, not this: found by an attack, h114). A directory's times move with any
 * name made in it: only what is new in it is the run's.
 */
function madeSince(path: Buffer, since: number): boolean {
  try {
    const st = lstatSync(path, { bigint: true });
    const ns = BigInt(Math.floor(since)) * 1_000_000n;
    return st.birthtimeNs >= ns || (!st.isDirectory() && st.ctimeNs >= ns);
  } catch {
    return false; // gone: nothing to remove
  }
}

/**
 * The symlinks the run made or moved (their change time is the run's) that stand above a name the
 * rules protect, or where a deny pattern's matches go through them (api-reach's
 * `patternShadowedBy`: a flake folder's `.nix` files): git, direnv or nix then reads that name
 * where the link points, a folder the command filled (found by an attack, h112: `ln -s ../evil
 * sub/tools` gave a nested repository's `core.fsmonitor = tools/bin/fsmon.sh` the command's
 * program, and a host `git status` ran it). The check walks without following links, so it never
 * saw what such a link leads to. The Linux commit asks the same (its evaluator's `shadowed`).
 */
function shadowingLinks(plan: MountPlan, later: readonly LandingRule[], links: readonly WalkEntry[]): WalkEntry[] {
  if (links.length === 0) return [];
  const named = [...plan.shadowable.named, ...later.flatMap((r) => ('path' in r ? [r.path] : []))];
  const patterns = { ...plan.shadowable.patterns, writeDeny: [...plan.shadowable.patterns.writeDeny, ...later] };
  // the folders that held a denied entry before the run: a link put in place of one (its folder
  // moved aside) sends those names where it points, even where only a pattern named them (a
  // flake's `nix/` moved aside and `nix -> ../evil` put there, h112 A13)
  const heldDenied = new Set<string>();
  for (const paths of plan.deniedInodes.values()) {
    for (const bytes of paths) {
      const text = utf8NameOf(bytes);
      // installs replace folders of node_modules with links (pnpm's layout): left to them, as the landings are
      if (text === undefined || text.includes('/node_modules/')) continue;
      for (let d = dirname(text); d !== dirname(d) && !heldDenied.has(d); d = dirname(d)) heldDenied.add(d);
    }
  }
  return links.filter(
    (link) =>
      changedSince(link.bytes, plan.plannedAt) &&
      (heldDenied.has(link.path) || named.some((p) => p !== link.path && isWithin(p, link.path)) || patternShadowedBy(patterns, link.path) !== undefined),
  );
}

/** Whether the entry at `path` changed (made, moved, its mode or owner set) at or after `since` (ms). */
function changedSince(path: Buffer, since: number): boolean {
  try {
    return lstatSync(path, { bigint: true }).ctimeNs >= BigInt(Math.floor(since)) * 1_000_000n;
  } catch {
    return false;
  }
}

/**
 * The marks the command made that complete a folder git takes for a repository (core's
 * takenForGitDir: HEAD with objects and refs, or HEAD with a commondir), outside any `.git`:
 * git reads that folder's config (a `core.pager` there ran at the person's next `git log`) before
 * it looks for the `.git` above. Refused by the shape, whatever the policy (as the Linux commit
 * does), counting what was there before: a `HEAD` the host had, with `objects` and `refs` the
 * command added, is the same disguise (found by an attack, h111). A folder whose marks were all
 * there before is the host's own repository, and stays.
 */
function disguiseMarks(plan: MountPlan, marks: ReadonlyMap<string, readonly WalkEntry[]>): WalkEntry[] {
  const out: WalkEntry[] = [];
  for (const [dir, entries] of marks) {
    const names = new Set(entries.map((e) => basename(e.path)));
    if (!takenForGitDir((name) => names.has(name))) continue;
    const made = entries.filter((e) => !plan.marksBefore.has(markKeyOf(e.bytes) ?? ''));
    // a moved repository of the person's whose config the command wrote is the same disguise
    const first = entries[0]!;
    const dirBytes = first.bytes.subarray(0, first.bytes.length - basename(first.path).length);
    const configs = ['config', 'config.worktree']
      .map((name) => ({ path: `${dir}/${name}`, bytes: Buffer.concat([dirBytes, Buffer.from(name)]), utf8: first.utf8, isDirectory: false, isSymbolicLink: false }))
      .filter((e) => madeSince(e.bytes, plan.plannedAt));
    if (made.length > 0 || configs.length > 0) out.push(...made, ...configs);
  }
  return out;
}

/** The identity of the entry at `path` (`dev:ino:birth time`), not following a symlink; undefined when it is gone. */
/** A directory's identity (`dev:ino`), or undefined when it is none (gone, not a directory, closed). */
function dirIdOf(path: Buffer): string | undefined {
  try {
    const st = lstatSync(path, { bigint: true });
    return st.isDirectory() ? `${st.dev}:${st.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function inodeKeyOf(path: Buffer): string | undefined {
  try {
    const st = lstatSync(path, { bigint: true });
    // the birth time tells a new file from an old one whose inode number it was given again
    return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * Whether the denied entry at `path` was there before the run: the same file at the same path,
 * or one that stood at another denied path and is no longer there (moved by the command: a rename
 * keeps the identity). A link to one whose old path is still there is a new name for it, and a
 * new file at an old path (written again after another container's landing there was removed) is
 * a write; neither is excused.
 */
function thereBefore(plan: MountPlan, path: Buffer): boolean {
  const inode = inodeKeyOf(path);
  const before = inode === undefined ? undefined : plan.deniedInodes.get(inode);
  if (before === undefined) return false;
  return before.some((old) => old.equals(path)) || before.every((old) => inodeKeyOf(old) !== inode);
}
