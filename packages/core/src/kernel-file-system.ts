import type { FileHandle } from 'node:fs/promises';
import { statfsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';

/**
 * The file systems that are the kernel's own view rather than anyone's files, by their magic
 * number (`statfs` f_type): read by a host-side tool they are the daemon's own process (its
 * memory, environment and keys: procfs) and the host kernel's settings. Judged by what the opened
 * file is on, not by its path, so procfs or sysfs mounted elsewhere (a container's `/host/proc`,
 * a bind mount in a workspace) is refused as `/proc` is.
 */
export const KERNEL_FILE_SYSTEMS: Readonly<Record<string, number>> = Object.freeze({
  proc: 0x9fa0,
  sysfs: 0x62656572,
  debugfs: 0x64626720,
  tracefs: 0x74726163,
  securityfs: 0x73636673,
  configfs: 0x62656570,
  efivarfs: 0xde5e81e4,
  bpf: 0xcafe4a11,
  // the host's process ids, its control groups and kernel services' own views (found by an attack: cgroup.procs and binfmt_misc read)
  cgroup: 0x27e0eb,
  cgroup2: 0x63677270,
  binfmt_misc: 0x42494e4d,
  pstore: 0x6165676c,
  mqueue: 0x19800202,
  selinuxfs: 0xf97cff8c,
  nfsd: 0x6e667364,
  fusectl: 0x65735543,
  rpc_pipefs: 0x67596969,
});

const BY_MAGIC = new Map(Object.entries(KERNEL_FILE_SYSTEMS).map(([name, magic]) => [magic, name]));

/**
 * The kernel file system an opened file is on (`proc`, `sysfs`, …), or `undefined` for any other.
 * Linux only (through `/proc/self/fd`, whose link statfs follows to the file); elsewhere `undefined`.
 */
export async function kernelFileSystemOf(handle: FileHandle): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  const { type } = await statfs(`/proc/self/fd/${handle.fd}`);
  return BY_MAGIC.get(Number(type));
}

/** {@link kernelFileSystemOf} for a descriptor, synchronously (the walks by descriptor, the sync anchors). */
export function kernelFileSystemOfFd(fd: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  return BY_MAGIC.get(Number(statfsSync(`/proc/self/fd/${fd}`).type));
}
