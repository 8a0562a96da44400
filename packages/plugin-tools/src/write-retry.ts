import { lstat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { compileRules, escapePattern, foldPath, type MovedAside, pathIsUnder, preparePath, type ReachCredential, type SandboxPolicy, sandboxPolicyAllows } from '@aalis/api-reach';
import { realPathOf } from '@aalis/plugin-reach';
import { isNeverWritten, neverWrittenMessage } from './secrets.js';

/**
 * Why a write the sandbox refused was not asked for, was refused again after a retry, or (approved)
 * did not land: a host change since the command started (`conflict`), a commit that failed
 * (`not-committed`), a command fed live input that the sandbox did not keep the write of and that
 * cannot be run again (`live-input`).
 */
export const REFUSAL_RULES = ['control-plane', 'secret-file', 'no-grant-helps', 'not-utf8', 'refused-again', 'conflict', 'not-committed', 'live-input'] as const;
/** One of {@link REFUSAL_RULES}. */
export type RefusalRule = (typeof REFUSAL_RULES)[number];

/** A write the sandbox refused (and undid) in the run that is returned, and why it stays refused. */
export interface RefusedWrite {
  readonly path: string;
  readonly rule: RefusalRule;
  readonly message: string;
  /** Where the command's version of it is now, when the sandbox moved it aside rather than deleting it (the run's `movedAside`). */
  readonly movedTo?: string;
}

/**
 * The refusals with where the sandbox put each entry it moved aside (the run's `movedAside`,
 * by real path), so the agent can say where the command's version went; the rest unchanged.
 */
export function withMovedAside(refusals: readonly RefusedWrite[], movedAside: readonly MovedAside[]): RefusedWrite[] {
  const to = new Map(movedAside.flatMap((entry) => (entry.to === undefined ? [] : [[entry.path, entry.to] as const])));
  return refusals.map((refusal) => {
    const at = to.get(refusal.path);
    return at === undefined ? refusal : { ...refusal, movedTo: at, message: `${refusal.message} The command's version is kept at ${at}.` };
  });
}

/**
 * What a refused write needs before a retry can succeed: nothing more (the policy already lets
 * the sandbox make it, so a retry would be refused the same way), one exact path to ask for, or
 * a reason no grant can help.
 */
export type WriteNeed =
  | { readonly kind: 'ask'; readonly path: string; readonly toMake?: string }
  | { readonly kind: 'unaskable'; readonly refusal: RefusedWrite }
  | { readonly kind: 'writable' };

/** Whether an entry is there (a symlink counts as itself); anything but "missing" is an error: it cannot be judged. */
async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw error;
  }
}

/** The nearest existing ancestor of a missing path, and the missing paths from below it down to the path. */
async function missingChain(path: string): Promise<{ ancestor: string; missing: string[] }> {
  const missing: string[] = [];
  let current = path;
  while (!(await exists(current))) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return { ancestor: current, missing };
}

function within(path: string, roots: readonly string[], platform: NodeJS.Platform): boolean {
  return roots.some((root) => pathIsUnder(path, root, platform));
}

/**
 * Whether a sandbox under `policy` can make this write. An existing entry: its write layers allow
 * it and it is not hidden (a hidden entry is a read-only stand-in inside, whatever the write
 * layers say). A new entry: the sandbox can only bind what exists, so its nearest existing
 * ancestor must lie in a writable root and be visible, and every entry to be created down to it
 * must be allowed by the write layers.
 */
async function sandboxCanWrite(policy: SandboxPolicy, path: string, platform: NodeJS.Platform): Promise<boolean> {
  const { ancestor, missing } = await missingChain(path);
  if (missing.length === 0) return sandboxPolicyAllows(policy, 'write', path, platform) && sandboxPolicyAllows(policy, 'read', path, platform);
  if (!within(ancestor, policy.write, platform) || !sandboxPolicyAllows(policy, 'read', ancestor, platform)) return false;
  // a new name the sandbox hides is one its commit refuses too (Linux overlay): no grant of a write makes it
  return missing.every((entry) => sandboxPolicyAllows(policy, 'write', entry, platform) && sandboxPolicyAllows(policy, 'read', entry, platform));
}

/**
 * Judges one refused write (a real path) against the policy the command ran under. Asked for,
 * exactly: an existing entry itself; a new entry itself when its directory is writable already
 * (only a layer on the name refused it, a landing), or first the entry above it to be made that a
 * layer refuses (`.vscode` for a new `.vscode/tasks.json`); otherwise the nearest existing directory,
 * because the sandbox cannot bind a name that does not exist (a second call then asks for the
 * name itself if a layer still refuses it). Never asked for: the control plane, the never-written
 * secrets, a root the sandbox mounts (a mount point cannot be renamed or removed from inside),
 * and anything no grant could let the sandbox write (the upper bound of every grant is tried
 * first). `writable` means the policy already allows the write: a grant would change nothing.
 */
export async function needOf(policy: SandboxPolicy, path: string, platform: NodeJS.Platform): Promise<WriteNeed> {
  // The path came through text (the command's stderr): a name that was not UTF-8 arrives as
  // U+FFFD and names some other entry, or none, so it cannot be asked for exactly.
  if (path.includes('\uFFFD')) {
    return unaskable(path, 'not-utf8', `writing ${path} was refused by the sandbox, but its name is not valid UTF-8 (shown with U+FFFD), so it cannot be named exactly in an ask; nothing was asked. Use a UTF-8 name, or write it outside the agent.`);
  }
  if (isNeverWritten(path, platform)) return unaskable(path, 'secret-file', neverWrittenMessage(path));
  const { ancestor, missing } = await missingChain(path);
  const control = compileRules(policy.controlDeny, platform);
  if ([path, ...missing].some((p) => control.test(preparePath(p, platform)))) {
    return unaskable(path, 'control-plane', `writing ${path} was refused (rule: control-plane): it is part of the host control plane (the daemon's state, configuration, secrets and loaded code), which no grant releases. This cannot be requested.`);
  }
  const folded = foldPath(path, platform);
  if ([...policy.write, ...policy.readAllowWithin, ...policy.unixSockets].some((root) => foldPath(root, platform) === folded)) {
    return unaskable(
      path,
      'no-grant-helps',
      `${path} is a root the sandbox mounts, and a mount point cannot be renamed, removed or replaced from inside, whatever is granted; nothing was asked. Do that outside the agent if it is needed.`,
    );
  }
  if (await sandboxCanWrite(policy, path, platform)) return { kind: 'writable' };
  const dirFirst = missing.length > 0 && !within(ancestor, policy.write, platform);
  const widest: SandboxPolicy = {
    ...policy,
    write: [...policy.write, dirFirst ? ancestor : path],
    writeExceptions: [...policy.writeExceptions, ...[path, ...missing].map((p) => ({ pattern: `^${escapePattern(p)}$` }))],
  };
  if (!(await sandboxCanWrite(widest, path, platform))) {
    return unaskable(
      path,
      'no-grant-helps',
      `writing ${path} was refused by the sandbox, and no grant can change that: it is on the deny-read list or under a directory the sandbox hides, and what the sandbox hides it cannot write either. Nothing was asked; write it yourself, outside the agent, if it is needed.`,
    );
  }
  if (dirFirst) return { kind: 'ask', path: ancestor, toMake: path };
  // The first entry on the way down that a layer refuses (a landing directory such as `.vscode`
  // to be made for `.vscode/tasks.json`), then, on the next call, the next one.
  return { kind: 'ask', path: missing.find((entry) => !sandboxPolicyAllows(policy, 'write', entry, platform)) ?? path };
}

function unaskable(path: string, rule: RefusalRule, message: string): WriteNeed {
  return { kind: 'unaskable', refusal: { path, rule, message } };
}

/** Refused paths past this many are not asked one by one: a command's stderr could name any number. */
export const MAX_REFUSED_ASKS = 12;

/** Grants one refused path may need: its directory, and the names below it that layers refuse. */
const MAX_GRANTS_PER_PATH = 4;

/** What came of the refused writes: retry with these grants, run once only, or a no. */
export type RetryPlan =
  | { readonly kind: 'retry'; readonly refused: readonly string[]; readonly granted: readonly string[] }
  | { readonly kind: 'once'; readonly refusals: readonly RefusedWrite[]; readonly why: string }
  | { readonly kind: 'not-approved'; readonly path: string; readonly message: string };

/**
 * Asks for what the refused writes need, exactly (see {@link needOf}), and says whether a retry
 * can succeed. Every refusal is judged before anyone is asked: if one cannot be granted, a retry
 * could not succeed, so nobody is asked for the others either. After each approval the policy is
 * rebuilt and judged again; a grant that changed nothing ends it. Fails closed: a path that cannot
 * be judged (an error taking its real path or looking at it) means no retry.
 */
export async function grantRefusedWrites(input: {
  readonly deniedWrites: readonly string[];
  /** The refused run's `movedAside`: a refusal of an entry the sandbox kept says where it is. */
  readonly movedAside?: readonly MovedAside[];
  readonly cwd: string;
  /** The policy the refused run ran under. */
  readonly policy: SandboxPolicy;
  /** The policy with this call's grants so far, rebuilt. */
  readonly policyNow: () => SandboxPolicy;
  readonly credential: ReachCredential;
  readonly platform: NodeJS.Platform;
}): Promise<RetryPlan> {
  const plan = await judgeAndAsk(input);
  return plan.kind === 'once' ? { ...plan, refusals: withMovedAside(plan.refusals, input.movedAside ?? []) } : plan;
}

async function judgeAndAsk(input: Parameters<typeof grantRefusedWrites>[0]): Promise<RetryPlan> {
  const { platform } = input;
  try {
    const refused = [...new Set(await Promise.all(input.deniedWrites.map((p) => realPathOf(p, input.cwd))))];
    if (refused.length > MAX_REFUSED_ASKS) {
      return { kind: 'once', refusals: [], why: `The sandbox refused ${refused.length} writes (${refused.slice(0, 3).join(', ')}, …): more than ${MAX_REFUSED_ASKS}, too many to ask for one by one, so nothing was asked. Run it in a tier or with roots that cover what it writes.` };
    }
    const cannot: RefusedWrite[] = [];
    for (const path of refused) {
      const need = await needOf(input.policy, path, platform);
      if (need.kind === 'unaskable') cannot.push(need.refusal);
      if (need.kind === 'writable') cannot.push(alreadyAllowed(path));
    }
    if (cannot.length > 0) return { kind: 'once', refusals: cannot, why: cannot.map((r) => r.message).join(' ') };

    const granted: string[] = [];
    for (const path of refused) {
      // A few grants a path at most: the directory a new entry is to be made in, then each name
      // on the way down that a layer refuses; each must be a new path.
      for (let step = 0; ; step++) {
        const need = await needOf(input.policyNow(), path, platform);
        if (need.kind === 'writable') break;
        if (need.kind === 'unaskable') return { kind: 'once', refusals: [need.refusal], why: need.refusal.message };
        if (step === MAX_GRANTS_PER_PATH || granted.includes(need.path)) {
          const refusal = noChange(path, granted.at(-1) ?? need.path);
          return { kind: 'once', refusals: [refusal], why: refusal.message };
        }
        const verdict = await input.credential.require({ effect: 'write', path: need.path, ...(need.toMake !== undefined ? { toMake: need.toMake } : {}) });
        if (!verdict.allowed) return { kind: 'not-approved', path, message: verdict.message };
        granted.push(need.path);
      }
    }
    return { kind: 'retry', refused, granted };
  } catch (error) {
    return { kind: 'once', refusals: [], why: `The sandbox refused writes, but they could not be judged (${(error as Error).message}), so nothing was asked.` };
  }
}

function alreadyAllowed(path: string): RefusedWrite {
  return {
    path,
    rule: 'no-grant-helps',
    message: `writing ${path} was refused by the sandbox although its policy allows that write; a grant would change nothing, so nothing was asked.`,
  };
}

function noChange(path: string, asked: string): RefusedWrite {
  return {
    path,
    rule: 'no-grant-helps',
    message: `writing ${path} was refused by the sandbox, and the grant of ${asked} did not make it writable under the new policy; a retry would be refused the same way.`,
  };
}
