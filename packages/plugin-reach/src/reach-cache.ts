import type { Reach } from '@aalis/api-reach';
import type { Binding } from './bindings.js';

/** Reaches kept per binding; the least recently used goes first past this (each holds compiled rules). */
export const REACH_CACHE_SIZE = 256;

/**
 * The reaches resolved for a binding, by everything else `resolveReach` is given that varies
 * between calls (principal, tier, boundary, session temp). `resolveReach` reads no file, so
 * the same inputs give the same reach: resolving it again on every call (its rules compiled
 * anew each time) was CPU on the daemon's thread for nothing. A new binding is a new object, so
 * a rebind never meets a reach of the old one; a changed setting is a different key.
 */
export class ReachCache {
  readonly #byBinding = new WeakMap<Binding, Map<string, Reach>>();

  constructor(private readonly size = REACH_CACHE_SIZE) {}

  /** The reach kept for `binding` and `key`, else `resolve()`'s (kept unless it throws). */
  get(binding: Binding, key: string, resolve: () => Reach): Reach {
    let kept = this.#byBinding.get(binding);
    if (kept === undefined) {
      kept = new Map();
      this.#byBinding.set(binding, kept);
    }
    const hit = kept.get(key);
    if (hit !== undefined) {
      // most recently used last: a Map iterates in insertion order
      kept.delete(key);
      kept.set(key, hit);
      return hit;
    }
    const reach = resolve();
    kept.set(key, reach);
    if (kept.size > this.size) kept.delete(kept.keys().next().value as string);
    return reach;
  }
}

/** The cache key of a call's reach for one binding: the inputs of `resolveReach` that are not the binding's. */
export function reachKeyOf(principal: string, tier: string, boundary: string, sessionTmp: string): string {
  return `${principal}\u0000${tier}\u0000${boundary}\u0000${sessionTmp}`;
}
