import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { bearerOf, same } from './token.js';

/** How long a pod capability opens the pod's API: a working day, and never past the daemon's run. */
export const POD_CAPABILITY_MS = 8 * 60 * 60 * 1000;
/** At most this many capabilities live at once; the oldest goes first. */
const MAX_LIVE = 64;

/** A capability as the console receives it. */
export interface PodCapability {
  readonly capability: string;
  readonly expiresAt: number;
}

/**
 * Capabilities that open the Isolation Pod's API (`/api/pod/…`) and nothing else, for the pod's
 * panel: the console asks for one with the owner's token, the panel's address carries a one-time
 * code that yields it sealed (console-codes.ts; never the capability itself, which the tab's history
 * would keep), and the panel sends it back as `Authorization: Bearer`. The owner's token
 * itself never leaves the console's tab (no cookie: cookies are not tied to a port, so every
 * other server on 127.0.0.1 would receive it). Kept in memory: a restart ends them all.
 */
export class PodCapabilities {
  readonly #live = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new capability, valid for {@link POD_CAPABILITY_MS}. */
  issue(): PodCapability {
    this.#prune();
    while (this.#live.size >= MAX_LIVE) this.#live.delete(this.#live.keys().next().value as string);
    const capability = `pod_${randomBytes(32).toString('base64url')}`;
    const expiresAt = this.now() + POD_CAPABILITY_MS;
    this.#live.set(capability, expiresAt);
    return { capability, expiresAt };
  }

  /** Whether the request's bearer is a live capability; compared in constant time. */
  matches(req: IncomingMessage): boolean {
    const given = bearerOf(req);
    if (given === undefined) return false;
    this.#prune();
    let found = false;
    for (const capability of this.#live.keys()) found = same(given, capability) || found;
    return found;
  }

  #prune(): void {
    const now = this.now();
    for (const [capability, expiresAt] of this.#live) if (expiresAt <= now) this.#live.delete(capability);
  }
}
