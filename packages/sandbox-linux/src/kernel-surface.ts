import { lstatSync } from 'node:fs';

/**
 * The kernel's own files in the sandbox. bwrap mounts a fresh `/proc` for the sandbox's pid
 * namespace and covers only `/proc/irq` and `/proc/bus` (and `/proc/sys`, `/proc/sysrq-trigger`
 * only where it finds them writable, which a root-run bwrap did not: `echo 6 >
 * /proc/sys/kernel/printk_ratelimit` changed the host, measured). A sysctl file is owned by the
 * host's root and checks the writer's uid, not its capabilities, so a command running as the
 * host's uid 0 writes host settings unless the mount is read-only. The table follows what
 * hardened container runtimes do: knobs that write the host are read-only, files that leak host
 * state (kernel memory, other users' keys, timers and scheduler state of the whole machine,
 * firmware tables, power counters usable as a side channel) are masked.
 */
export const KERNEL_SURFACE = [
  { path: '/proc/sys', action: 'read-only', why: 'sysctls: host kernel settings (core_pattern runs a program as root)' },
  { path: '/proc/sysrq-trigger', action: 'read-only', why: 'reboots, crashes or freezes the host' },
  { path: '/proc/irq', action: 'read-only', why: 'interrupt affinity of the host' },
  { path: '/proc/bus', action: 'read-only', why: 'PCI and USB configuration space' },
  { path: '/proc/fs', action: 'read-only', why: 'file system tunables (nfsd, fscache)' },
  { path: '/proc/kcore', action: 'masked', why: 'the host kernel memory' },
  { path: '/proc/kmsg', action: 'masked', why: 'the host kernel log' },
  { path: '/proc/keys', action: 'masked', why: 'kernel keyrings of the host' },
  { path: '/proc/key-users', action: 'masked', why: 'key quotas of every host user' },
  { path: '/proc/timer_list', action: 'masked', why: 'every timer of the host, with task names' },
  { path: '/proc/timer_stats', action: 'masked', why: 'timer statistics of the host' },
  { path: '/proc/sched_debug', action: 'masked', why: 'every task of the host, with names' },
  { path: '/proc/latency_stats', action: 'masked', why: 'latency records of the host' },
  { path: '/proc/acpi', action: 'masked', why: 'ACPI tables and controls' },
  { path: '/proc/scsi', action: 'masked', why: 'SCSI controls (add or remove devices)' },
  { path: '/proc/asound', action: 'masked', why: 'sound devices' },
  { path: '/sys/firmware', action: 'masked', why: 'firmware tables (ACPI, DMI with serial numbers)' },
  { path: '/sys/devices/virtual/powercap', action: 'masked', why: 'energy counters, a known side channel' },
] as const satisfies readonly { path: string; action: 'read-only' | 'masked'; why: string }[];

/** One entry of {@link KERNEL_SURFACE} that exists on this kernel, with its kind. */
export interface KernelPath {
  readonly path: string;
  readonly action: 'read-only' | 'masked';
  readonly kind: 'dir' | 'file';
}

let cached: readonly KernelPath[] | undefined;

/**
 * The entries of {@link KERNEL_SURFACE} this kernel has (bwrap cannot make a mount point in
 * `/proc` or `/sys`, so a missing one must be left out). The sandbox's `/proc` is a fresh mount of
 * the same kernel, so the host's tells; kernel files do not come and go, so it is looked at once.
 */
export function kernelSurface(): readonly KernelPath[] {
  if (cached) return cached;
  const out: KernelPath[] = [];
  for (const e of KERNEL_SURFACE) {
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(e.path, { throwIfNoEntry: false });
    } catch {
      st = undefined; // EACCES: nothing the sandbox could reach either
    }
    if (st && !st.isSymbolicLink()) out.push({ path: e.path, action: e.action, kind: st.isDirectory() ? 'dir' : 'file' });
  }
  cached = out;
  return out;
}

/**
 * bwrap arguments for {@link kernelSurface}, after `--proc /proc`: read-only knobs bound over
 * themselves read-only (the host's own `/proc/sys`: a sysctl file serves the netns of the
 * process that opens it, so the sandbox still sees its own network namespace's values), masked
 * files the empty file, masked directories an empty tmpfs (remounted read-only by the caller;
 * returned in `remountRo`). `/sys` is read-only through the `/` bind and its submounts; `rootRw`
 * (a policy whose `/` is writable) binds it read-only again.
 */
export function kernelSurfaceArgs(paths: readonly KernelPath[], emptyFile: string, rootRw: boolean): { args: string[]; remountRo: string[]; usesEmptyFile: boolean } {
  const args: string[] = rootRw ? ['--ro-bind', '/sys', '/sys'] : [];
  const remountRo: string[] = [];
  let usesEmptyFile = false;
  for (const p of paths) {
    if (p.action === 'read-only') args.push('--ro-bind', p.path, p.path);
    else if (p.kind === 'dir') {
      args.push('--tmpfs', p.path);
      remountRo.push(p.path);
    } else {
      args.push('--ro-bind', emptyFile, p.path);
      usesEmptyFile = true;
    }
  }
  return { args, remountRo, usesEmptyFile };
}
