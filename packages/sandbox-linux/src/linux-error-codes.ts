/**
 * The codes of the Linux backend's own errors (each class extends core's `AalisError`). Most are
 * caught inside the backend and reported as a `SandboxUnavailableError` naming the same rule.
 */
export const LINUX_ERROR_CODES = [
  /** The daemon's temp directory cannot be hidden from the run (daemon-tmp.ts). */
  'daemon-tmp-visible',
  /** The seccomp filter program could not be assembled (seccomp.ts). */
  'seccomp-build',
  /** nft could not install the localPorts filter (loopback-filter.ts). */
  'loopback-filter',
  /** A policy path cannot be expressed as mounts (translate.ts). */
  'untranslatable',
  /** The policy asks for the overlay and the run cannot have it (overlay-run.ts). */
  'overlay-required',
  /** bubblewrap's setup failed for a reason a fresh attempt does not share (service.ts). */
  'setup-transient',
  /** No way to apply the pid limit (pid-limit.ts). */
  'pid-limit',
  /** A host entry changed during the run, so the commit left it alone (commit-conflicts.ts). */
  'commit-conflict',
  /** The host walk thread failed without a code of its own (host-thread.ts). */
  'host-walk',
  /** The host has more entries than the scan's limit (scan.ts). */
  'scan-limit',
  /** A directory was moved while a commit walked under it (dir-cursor.ts). */
  'dir-moved',
  /** A tree could not be moved across file systems and was left in place (safe-move.ts). */
  'move-failed',
  /** Kept writes whose layers are gone (kept-writes.ts). */
  'kept-writes-gone',
  /** A prepared sandbox did not match its run at release; the run went cold (service.ts, internal). */
  'prepared-cold',
] as const;
/** One of {@link LINUX_ERROR_CODES}. */
export type LinuxErrorCode = (typeof LINUX_ERROR_CODES)[number];
