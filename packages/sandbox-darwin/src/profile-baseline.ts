// What any command needs besides files and network, kept small because every grant here is
// beyond the policy. Mach services are the real escape hatch of a Seatbelt profile (a daemon
// that writes or launches on the caller's behalf), so only lookups that read, or that check the
// caller's sandbox themselves, are allowed: user and group lookups, logging, temp-dir discovery,
// certificate checks, file events, ps, preferences. Left out on purpose: launchservicesd (opens
// apps), the pasteboard, the window server, SecurityServer (the keychain).

/**
 * Mach services every command may look up. cfprefsd is here because `user-preference-read`
 * means nothing without it (preferences are read through it). This relies on cfprefsd checking
 * a sandboxed client's writes against the client's profile (`user-preference-write`, never
 * allowed): test:mac's `defaults write` test is what verifies it on a Mac.
 */
export const BASE_MACH_SERVICES = [
  'com.apple.bsd.dirhelper',
  'com.apple.cfprefsd.agent',
  'com.apple.cfprefsd.daemon',
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

/**
 * Sysctls a command may read, by name: the machine and the OS (what runtimes ask for CPU
 * count, page size, features, version), and process listings by pid or group (names and
 * states, no arguments). Never `kern.procargs*`: that is another process's argv and environment,
 * the daemon's included.
 */
export const SYSCTL_READ_NAMES = [
  'hw.activecpu',
  'hw.busfrequency_compat',
  'hw.byteorder',
  'hw.cacheconfig',
  'hw.cachelinesize',
  'hw.cachelinesize_compat',
  'hw.cpufamily',
  'hw.cpufrequency',
  'hw.cpufrequency_compat',
  'hw.cpusubtype',
  'hw.cputype',
  'hw.l1dcachesize',
  'hw.l1dcachesize_compat',
  'hw.l1icachesize',
  'hw.l1icachesize_compat',
  'hw.l2cachesize',
  'hw.l2cachesize_compat',
  'hw.l3cachesize_compat',
  'hw.logicalcpu',
  'hw.logicalcpu_max',
  'hw.machine',
  'hw.memsize',
  'hw.model',
  'hw.ncpu',
  'hw.nperflevels',
  'hw.packages',
  'hw.pagesize',
  'hw.pagesize_compat',
  'hw.physicalcpu',
  'hw.physicalcpu_max',
  'hw.tbfrequency',
  'hw.tbfrequency_compat',
  'hw.vectorunit',
  'kern.argmax',
  'kern.boottime',
  'kern.hostname',
  'kern.maxfiles',
  'kern.maxfilesperproc',
  'kern.maxproc',
  'kern.ngroups',
  'kern.osproductversion',
  'kern.osrelease',
  'kern.ostype',
  'kern.osvariant_status',
  'kern.osversion',
  'kern.secure_kernel',
  'kern.tcsm_available',
  'kern.usrstack64',
  'kern.version',
  'machdep.ptrauth_enabled',
  'security.mac.lockdown_mode_state',
  'sysctl.proc_cputype',
  'sysctl.proc_translated',
  'vm.loadavg',
  'vm.pagesize',
] as const;

/** Sysctl name prefixes a command may read (CPU features, performance levels, ps, routes). */
export const SYSCTL_READ_PREFIXES = ['hw.optional.', 'hw.perflevel', 'kern.proc.all', 'kern.proc.pgrp.', 'kern.proc.pid.', 'machdep.cpu.', 'net.routetable.'] as const;

/** Denied after the allows whatever they grow to: another process's arguments and environment. */
export const SYSCTL_NEVER_PREFIX = 'kern.procargs';

/** The one sysctl write: the JVM reads the CPU grade through it (a read, passed as a write). */
export const SYSCTL_WRITE_NAMES = ['kern.grade_cputype'] as const;

/** Shared-memory segments of the system a command may read: notifications and preferences. */
export const SHM_READ = { names: ['apple.shm.notification_center'], prefixes: ['apple.cfprefs.'] } as const;

/**
 * Shared-memory segments a command may create and use, by the names the tools that use them
 * give: Python's `multiprocessing.shared_memory` (`/psm_…`) and OpenMP's registration
 * (`/__KMP_REGISTERED_LIB_<pid>`). Any other segment of the same user is out of reach.
 */
export const SHM_OWN = { prefixes: ['/psm_'], regexes: ['^/__KMP_REGISTERED_LIB_[0-9]+$'] } as const;

/** Rules before the layers: processes, signals within the sandbox, reads of system state. */
export const BASELINE_RULES = [
  '(allow process-exec)',
  '(allow process-fork)',
  // Same sandbox only: another process's info includes its arguments and environment (the daemon's).
  '(allow process-info* (target same-sandbox))',
  '(allow signal (target same-sandbox))',
  '(allow user-preference-read)',
  '(allow iokit-get-properties)',
  '(allow ipc-posix-sem)',
  // openpty: the pty it opens carries the sandbox's pty extension (see PTY_DEVICES).
  '(allow pseudo-tty)',
] as const;

/** Device nodes writable in every profile: the bit bucket, the caller's own terminal, descriptors. */
export const BASE_WRITABLE_DEVICES = ['/dev/null', '/dev/zero', '/dev/tty', '/dev/dtracehelper'] as const;

/** The pty multiplexer, opened by openpty and friends. */
export const PTY_MASTER = '/dev/ptmx';

/** Terminals: readable by the read default, denied so a command cannot read someone's keystrokes. */
export const OTHER_TERMINALS_REGEX = '^/dev/ttys[0-9]+$';

/** The extension Seatbelt gives a pty a sandboxed process opened: only those terminals are usable. */
export const PTY_EXTENSION = 'com.apple.sandbox.pty';

/** The caller's own descriptors, reopened by path (`/dev/stdout` resolves here). */
export const OWN_DESCRIPTORS_REGEX = '^/dev/fd/[0-9]+$';
