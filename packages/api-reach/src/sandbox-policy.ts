import type { PathRule } from './rule.js';

/**
 * What a sandboxed command may touch, in layers that every backend translates in this order,
 * later layers winning: reads default → `readDeny` → `readAllowWithin`; writes default deny →
 * `write` → `writeDeny` → `writeExceptions` → `controlDeny`.
 */
export interface SandboxPolicy {
  /** Never readable: the deny-read list. */
  readonly readDeny: readonly PathRule[];
  /** Readable again after `readDeny`: the session temp. */
  readonly readAllowWithin: readonly string[];
  /** Writable roots, including out-of-range writes approved for this command. */
  readonly write: readonly string[];
  /** Not writable again: the landings. */
  readonly writeDeny: readonly PathRule[];
  /** Writable again after `writeDeny`: node_modules under each writable root, approved landing paths. */
  readonly writeExceptions: readonly PathRule[];
  /** The host control plane: never writable, after every allow and exception. */
  readonly controlDeny: readonly PathRule[];
  /** `on`: outbound IP, minus `localPorts`. */
  readonly network: 'off' | 'on';
  /** Ports on the host's loopback the sandbox must not connect to. */
  readonly localPorts: readonly number[];
  /** Directories whose unix sockets the sandbox may connect to. */
  readonly unixSockets: readonly string[];
  /**
   * The session temp: what `/tmp` is inside the sandbox, and where `TMPDIR` points, so a write
   * there survives the command. Optional: a backend given none says its `/tmp` is discarded.
   */
  readonly tmp?: string;
}

/** What was approved for one command, kept apart by the reason it was approved for. */
export interface SandboxGrants {
  /** Out-of-range writes: join the writable roots; landings under them stay denied. */
  readonly writePaths?: readonly string[];
  /** Approved landings: exactly these paths are writable again, nothing under them. */
  readonly landingPaths?: readonly string[];
  /** Network approved in the readonly tier. */
  readonly network?: boolean;
}
