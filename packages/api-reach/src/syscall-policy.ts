/*
 * What every sandboxed command may not ask the kernel for, as data: the Linux backend assembles it
 * into a classic-BPF program for bubblewrap (sandbox-linux `seccomp.ts`), the docker backend into
 * the engine's seccomp profile (sandbox-docker `seccomp-profile.ts`). One list, two translators.
 */

/** Refused outright with EPERM: tracing other processes, io_uring (its ops bypass seccomp), kernel and mount surfaces. */
export const DENIED_SYSCALLS = [
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'io_uring_setup', 'io_uring_enter', 'io_uring_register',
  'setns', 'bpf', 'perf_event_open', 'keyctl', 'add_key', 'request_key', 'userfaultfd', 'mount', 'umount2',
  'pivot_root', 'open_by_handle_at', 'name_to_handle_at', 'init_module', 'finit_module', 'delete_module',
  'kexec_load', 'kexec_file_load', 'reboot', 'acct', 'fsopen', 'fsmount', 'move_mount', 'open_tree',
] as const;

/**
 * Refused with ENOSYS, so that libc and programs fall back to the older call the filter can read:
 * `clone3` and `openat2` pass their flags and mode behind a pointer.
 */
export const FALLBACK_SYSCALLS = ['clone3', 'openat2'] as const;

/** ioctl requests refused: keystroke injection into a terminal (TIOCSTI) and the Linux console's TIOCLINUX. */
export const DENIED_IOCTLS = { TIOCSTI: 0x5412, TIOCLINUX: 0x541c } as const;

/** `clone`/`unshare` with this flag (a new user namespace) are refused with EPERM. */
export const CLONE_NEWUSER = 0x10000000;

/**
 * socket(AF_NETLINK, *, NETLINK_NETFILTER) is refused: it is how nftables rules are read and
 * changed, and with network `on` the sandbox's own namespace holds the rules refusing its
 * localPorts. A second wall (the command has no CAP_NET_ADMIN either); NETLINK_ROUTE (`ip`) stays.
 */
export const DENIED_SOCKETS = { AF_NETLINK: 16, NETLINK_NETFILTER: 12 } as const;

/** S_ISUID and S_ISGID: a mode with either is refused (see {@link MODE_SYSCALLS}). */
export const SET_ID_BITS = [0o4000, 0o2000] as const;

/** O_CREAT and __O_TMPFILE (the same on x86_64 and aarch64): only with one of them does an open use its mode. */
export const CREATING_OPEN_FLAGS = [0o100, 0o20000000] as const;

/**
 * Syscalls that set a file's mode, with the argument holding it (and, for the opens, the flags
 * argument that says whether the mode is used). A set-user-id or set-group-id bit is refused with
 * EPERM: the command's files outlive it on the host, and one a root daemon's command made
 * (`cp /bin/sh x; chmod u+s x`) would be a root shell for every local user who can reach the
 * workspace. The owner may set those bits without any capability, so only the filter stops it.
 * Calls an architecture lacks (aarch64 has no `chmod`, `open`, `creat`, `mknod`) are skipped there.
 */
export const MODE_SYSCALLS: readonly (readonly [name: string, modeArg: number, flagsArg?: number])[] = [
  ['chmod', 1],
  ['fchmod', 1],
  ['fchmodat', 2],
  ['fchmodat2', 2],
  ['creat', 1],
  ['mknod', 1],
  ['mknodat', 2],
  ['open', 2, 1],
  ['openat', 3, 2],
];
