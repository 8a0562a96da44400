import type { ReachRequest } from './judge.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/**
 * The brand of a reach credential, in the global symbol registry so two copies of this package in
 * one process still recognise each other's credentials. Only this package and the reach plugin
 * mention it (guarded by test/architecture).
 */
export const REACH_CREDENTIAL: unique symbol = Symbol.for('@aalis/api-reach/credential');

/** The answer of {@link ReachCredential.require}: allowed, or not with a message saying what to do. */
export type ReachVerdict = { readonly allowed: true } | { readonly allowed: false; readonly message: string };

/**
 * What one tool call may touch, issued per call by the reach plugin only. Tools hand it on to
 * storage and the sandbox and never build one. The brand is a non-enumerable own property, so a
 * spread or `Object.assign` copy is no credential. `exec` and `home` are fixed when issued;
 * `require`, `allows` and `sandboxPolicy` follow the session's settings at every call, so a
 * downgrade applies at once.
 */
export interface ReachCredential {
  /** The brand; not enumerable. */
  readonly [REACH_CREDENTIAL]: true;
  readonly exec: 'none' | 'sandbox' | 'host';
  /** The main directory: the cwd when a tool has none, and where output without a place goes. */
  readonly home?: string;
  /**
   * Whether a target may be touched, asking through the approval service when it must; when not,
   * the message says what to do, why not, and whether it can be requested at all.
   */
  require(request: ReachRequest): Promise<ReachVerdict>;
  /** The storage backstop: whether a real path may be read or written, one-shot approvals of this call included. */
  allows(effect: 'read' | 'write', realPath: string): boolean;
  /** The sandbox policy with this call's grants; throws unless `exec` is `sandbox`. */
  sandboxPolicy(): SandboxPolicy;
  /** The whole environment of a child process; throws for a credential without local effect. */
  processEnv(mode: 'sandbox' | 'host'): Promise<Record<string, string>>;
}

const EXECS: ReadonlySet<unknown> = new Set(['none', 'sandbox', 'host']);

/**
 * Whether `value` is a reach credential: it carries the brand as its own non-enumerable property
 * and the credential's methods. Anything else (a copy, a look-alike, a plain object) is treated
 * as no credential at all.
 */
export function isReachCredential(value: unknown): value is ReachCredential {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const brand = Object.getOwnPropertyDescriptor(value, REACH_CREDENTIAL);
  if (brand === undefined || brand.value !== true || brand.enumerable) return false;
  const c = value as Record<PropertyKey, unknown>;
  return (
    EXECS.has(c.exec) &&
    typeof c.require === 'function' &&
    typeof c.allows === 'function' &&
    typeof c.sandboxPolicy === 'function' &&
    typeof c.processEnv === 'function'
  );
}
