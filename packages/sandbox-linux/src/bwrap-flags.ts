/**
 * Namespaces and process flags of every run: a new user namespace in which no further user
 * namespace can be made (`--disable-userns`, and the seccomp filter besides), new ipc, pid, uts,
 * cgroup and network namespaces (network `on` gets its connectivity from slirp4netns, never the
 * host's namespace), the sandbox killed with its parent, and a new session so the command has no
 * controlling terminal to inject keystrokes into.
 */
export const NAMESPACE_FLAGS = [
  '--unshare-user',
  '--disable-userns',
  '--unshare-ipc',
  '--unshare-pid',
  '--unshare-net',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--die-with-parent',
  '--new-session',
] as const;

/** The fd on which bubblewrap reads the seccomp program. */
export const SECCOMP_FD = 3;
