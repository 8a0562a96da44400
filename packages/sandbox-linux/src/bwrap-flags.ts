/**
 * Namespaces and process flags of every run: a new user namespace (in which the seccomp filter
 * refuses further ones, and `--disable-userns` too where the network is off), new ipc, pid, uts,
 * cgroup and network namespaces (network `on` gets its connectivity from slirp4netns, never the
 * host's namespace), the sandbox killed with its parent, a new session so the command has no
 * controlling terminal to inject keystrokes into, and no capabilities (run as root, bwrap keeps them).
 */
export const NAMESPACE_FLAGS = [
  '--unshare-user',
  '--unshare-ipc',
  '--unshare-pid',
  '--unshare-net',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--die-with-parent',
  '--new-session',
  // bwrap run by root otherwise leaves the command every capability in its user namespace
  '--cap-drop',
  'ALL',
] as const;

/** The fd on which bubblewrap reads the seccomp program. */
export const SECCOMP_FD = 3;

/** With network off, bwrap also caps nested user namespaces at zero (network.ts says why not with on). */
export const NETWORK_OFF_FLAGS = ['--disable-userns'] as const;
