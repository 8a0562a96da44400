// What any command needs besides files and network, kept small because every grant here is
// beyond the policy. Mach services are the real escape hatch of a Seatbelt profile (a daemon
// that writes or launches on the caller's behalf), so only lookups that read are allowed:
// user and group lookups, logging, temp-dir discovery, certificate checks, file events, ps.
// Left out on purpose: launchservicesd (opens apps), cfprefsd (writes preferences for you),
// the pasteboard, the window server, SecurityServer (the keychain).

/** Mach services every command may look up. */
export const BASE_MACH_SERVICES = [
  'com.apple.bsd.dirhelper',
  'com.apple.FSEvents',
  'com.apple.logd',
  'com.apple.system.logger',
  'com.apple.system.notification_center',
  'com.apple.system.opendirectoryd.libinfo',
  'com.apple.system.opendirectoryd.membership',
  'com.apple.sysmond',
  'com.apple.trustd',
  'com.apple.trustd.agent',
] as const;

/** Mach services a command with network on may look up too (DNS and network configuration). */
export const NETWORK_MACH_SERVICES = [
  'com.apple.dnssd.service',
  'com.apple.SystemConfiguration.configd',
  'com.apple.SystemConfiguration.DNSConfiguration',
] as const;

/** The mDNSResponder socket: on macOS every name lookup goes through it. */
export const DNS_SOCKET = '/private/var/run/mDNSResponder';

/** Rules before the layers: processes, signals within the sandbox, reads of system state. */
export const BASELINE_RULES = [
  '(allow process-exec)',
  '(allow process-fork)',
  // Same sandbox only: another process's info includes its arguments and environment (the daemon's).
  '(allow process-info* (target same-sandbox))',
  '(allow signal (target same-sandbox))',
  '(allow sysctl-read)',
  '(allow user-preference-read)',
  '(allow iokit-get-properties)',
  '(allow ipc-posix-sem)',
  '(allow ipc-posix-shm)',
] as const;

/** Device nodes writable in every profile: the bit bucket, the caller's own terminal, descriptors. */
export const BASE_WRITABLE_DEVICES = ['/dev/null', '/dev/zero', '/dev/tty', '/dev/dtracehelper'] as const;

/** Other terminals: readable by the read default, denied so a command cannot read someone's keystrokes. */
export const OTHER_TERMINALS_REGEX = '^/dev/ttys[0-9]+$';

/** The caller's own descriptors, reopened by path (`/dev/stdout` resolves here). */
export const OWN_DESCRIPTORS_REGEX = '^/dev/fd/[0-9]+$';
