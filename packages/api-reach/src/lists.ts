import type { PathRule } from './rule.js';

/**
 * The three protected lists, built by `protectedLists` for one platform (whose comparison rules
 * they are matched with).
 */
export interface ProtectedLists {
  /** The platform the lists were built for: decides case folding and slashes when matching. */
  readonly platform: NodeJS.Platform;
  /** The host control plane: never writable, in any tier, and cannot be requested. */
  readonly control: readonly PathRule[];
  /** Persistence and auto-execution landings: writing one asks (and `full` writes it, audited). */
  readonly landing: readonly PathRule[];
  /** Never readable through the tool boundary or in the sandbox. */
  readonly denyRead: readonly PathRule[];
}
