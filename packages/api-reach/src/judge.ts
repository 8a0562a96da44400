import { ReachInputError } from './errors.js';
import { type PreparedPath, preparePath } from './match.js';
import { isUnder } from './path.js';
import { inKernelTree } from './refused-writes.js';
import { compiledReach, type LocalReach, type Reach } from './reach.js';

/** One target of a tool call to judge. Paths are real paths. */
export type ReachRequest =
  /** `toMake` (writes only): the new entry below `path` a command was refused; the sandbox can only grant it through `path`, its nearest existing directory. */
  | { readonly effect: 'read' | 'write'; readonly path: string; readonly toMake?: string }
  /** Writing an orchestration definition, by id: it persists and runs later, so it is a landing. */
  | { readonly effect: 'write'; readonly workflow: string }
  /** `host`: the command is to run outside the sandbox; `command`: which one, so an ask can name it. */
  | { readonly effect: 'exec'; readonly host: boolean; readonly command?: ExecCommand }
  | { readonly effect: 'network'; readonly via: 'url' | 'command' | 'provider' };

/** A command as it is to run: exactly its argv (a shell string is `['/bin/sh', '-c', string]`), the real path it starts in, and its standard input (a script piped to a shell is the command). */
export interface ExecCommand {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly stdin?: string;
}

/** Why a target is asked: the confirm tier, a boundary (out of range), or a landing. */
export type ReachAskReason =
  | { readonly kind: 'tier' }
  | { readonly kind: 'boundary'; readonly target: 'write-path' | 'host-exec' | 'network' }
  | { readonly kind: 'landing' };

/**
 * Allow (with `landing` when `full` writes a landing: write it and audit it), ask (with a
 * reason), or deny (with the rule; `no-local-effect`, `control-plane`, `deny-read` and
 * `kernel-tree` cannot be requested, `boundary-policy` is an ask the boundary policy turned into
 * a deny).
 */
export type ReachDecision =
  | { readonly verdict: 'allow'; readonly landing?: true }
  | { readonly verdict: 'ask'; readonly reason: ReachAskReason }
  | { readonly verdict: 'deny'; readonly rule: 'no-local-effect' | 'control-plane' | 'deny-read' | 'kernel-tree' }
  | { readonly verdict: 'deny'; readonly rule: 'boundary-policy'; readonly reason: ReachAskReason };

const ALLOW: ReachDecision = Object.freeze({ verdict: 'allow' });
const ALLOW_LANDING: ReachDecision = Object.freeze({ verdict: 'allow', landing: true });
const DENY_NO_LOCAL: ReachDecision = Object.freeze({ verdict: 'deny', rule: 'no-local-effect' });
const DENY_CONTROL: ReachDecision = Object.freeze({ verdict: 'deny', rule: 'control-plane' });
const DENY_READ: ReachDecision = Object.freeze({ verdict: 'deny', rule: 'deny-read' });
const DENY_KERNEL: ReachDecision = Object.freeze({ verdict: 'deny', rule: 'kernel-tree' });

/**
 * A path a tool call reads or writes on the host side is reached by the daemon's own process: on
 * Linux, `/proc` there is the daemon's (`/proc/self/mem` and `environ` hold its token and keys,
 * `/proc/<pid>/environ` other processes' secrets when it runs as root) and `/sys` the host
 * kernel's. Neither is a file of the person's; a command reads them in its sandbox, which has a
 * `/proc` of its own and a read-only `/sys`.
 */
function hostKernelTree(reach: LocalReach, path: string): boolean {
  return reach.lists.platform === 'linux' && inKernelTree(path);
}

const REASONS = {
  tier: Object.freeze({ kind: 'tier' }),
  landing: Object.freeze({ kind: 'landing' }),
  writePath: Object.freeze({ kind: 'boundary', target: 'write-path' }),
  hostExec: Object.freeze({ kind: 'boundary', target: 'host-exec' }),
  network: Object.freeze({ kind: 'boundary', target: 'network' }),
} as const satisfies Record<string, ReachAskReason>;

/** An ask, unless the boundary policy is `deny` in a tier it governs (readonly, workspace; never confirm). */
function ask(reach: LocalReach, reason: ReachAskReason): ReachDecision {
  if (reach.onBoundary === 'deny' && (reach.tier === 'readonly' || reach.tier === 'workspace')) {
    return { verdict: 'deny', rule: 'boundary-policy', reason };
  }
  return { verdict: 'ask', reason };
}

function prepared(reach: LocalReach, path: unknown): PreparedPath {
  if (typeof path !== 'string') throw new ReachInputError('request', `a read or write request needs a path string, got ${typeof path}.`);
  return preparePath(path, reach.lists.platform, 'the target');
}

function judgeWrite(reach: LocalReach, path: string): ReachDecision {
  const c = compiledReach(reach);
  const p = prepared(reach, path);
  if (hostKernelTree(reach, path)) return DENY_KERNEL;
  if (c.control.test(p)) return DENY_CONTROL;
  if (c.landing.test(p)) return reach.tier === 'full' ? ALLOW_LANDING : ask(reach, REASONS.landing);
  if (reach.tier === 'full') return ALLOW;
  if (reach.tier === 'confirm') return ask(reach, REASONS.tier);
  return c.roots.test(p) ? ALLOW : ask(reach, REASONS.writePath);
}

function judgeRead(reach: LocalReach, path: string): ReachDecision {
  const c = compiledReach(reach);
  const p = prepared(reach, path);
  if (hostKernelTree(reach, path)) return DENY_KERNEL;
  if (isUnder(p.folded, c.tmp)) return ALLOW;
  return c.denyRead.test(p) ? DENY_READ : ALLOW;
}

function judgeExec(reach: LocalReach, host: boolean): ReachDecision {
  switch (reach.tier) {
    case 'full':
      return ALLOW;
    case 'confirm':
      // Everything runs on the host here, and every command is confirmed.
      return ask(reach, REASONS.tier);
    default:
      return host ? ask(reach, REASONS.hostExec) : ALLOW;
  }
}

/**
 * Judges one target against a reach, row by row of the tier table. A write is checked in this
 * order: control plane (deny) → landing (`full` allows with `landing: true`, the others ask) →
 * `full` allows → `confirm` asks → inside a writable root allows → otherwise an out-of-range
 * write. A read is checked against the deny-read list only; the session temp is always readable.
 * On Linux, a read or write in `/proc` or `/sys` is `kernel-tree` whatever the tier.
 * Without local effect, reads, writes and exec are denied (`no-local-effect`) and network is
 * allowed. Throws {@link ReachInputError} for a relative or unresolved path (fail closed).
 */
export function judgeReach(reach: Reach, request: ReachRequest): ReachDecision {
  if (reach.exec === 'none') {
    if (request.effect === 'network') return ALLOW;
    if (request.effect === 'read' || request.effect === 'write' || request.effect === 'exec') return DENY_NO_LOCAL;
  } else {
    switch (request.effect) {
      case 'read':
        return judgeRead(reach, request.path);
      case 'write':
        if ('workflow' in request) {
          if (typeof request.workflow !== 'string' || request.workflow === '') {
            throw new ReachInputError('request', 'a workflow write needs the workflow id.');
          }
          return reach.tier === 'full' ? ALLOW_LANDING : ask(reach, REASONS.landing);
        }
        return judgeWrite(reach, request.path);
      case 'exec':
        return judgeExec(reach, request.host !== false); // anything but an explicit false is a host exec
      case 'network':
        return reach.tier === 'readonly' ? ask(reach, REASONS.network) : ALLOW;
    }
  }
  throw new ReachInputError('request', `unknown request ${JSON.stringify(request)}: effect must be read, write, exec or network.`);
}
