import { statfsSync } from 'node:fs';

/**
 * File systems (statfs `f_type`) whose directories' change time this kernel keeps itself, on every
 * entry added, removed or renamed: ext2/3/4, xfs, btrfs, tmpfs, ramfs, f2fs, zfs, bcachefs, and
 * overlayfs (a change made through it stamps the upper directory; its layers must not change
 * underneath, as the kernel's documentation says). Not a network or FUSE file system (NFS, CIFS,
 * sshfs, 9p, virtiofs, …): their attributes are the server's, cached or made up, and a directory
 * there can gain a `.env` while keeping its device, inode and ctime (scan-reuse-fs.test.ts).
 * What trusts a directory's stamp to tell a change (a kept listing, host-walk.ts; a kept walk,
 * scan-reuse.ts) trusts it only on these.
 */
export const STAMPED_FILE_SYSTEMS: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x858458f6, 0xf2f52010, 0x2fc12fc1, 0xca451a4e, 0x794c7630]);

/** Whether `path` lies on a file system of {@link STAMPED_FILE_SYSTEMS}; false when it cannot be told. */
export function onStampedFileSystem(path: string | Buffer): boolean {
  try {
    return STAMPED_FILE_SYSTEMS.has(Number(statfsSync(path).type));
  } catch {
    return false;
  }
}

/**
 * {@link onStampedFileSystem} asked once per device, for one walk or one check: a device number
 * is given again once its file system is unmounted (a FUSE mount may get a gone tmpfs's), so the
 * answers are not kept longer.
 */
export class StampedDevices {
  private readonly known = new Map<bigint, boolean>();

  /** Whether the directory `path`, on device `dev`, is on a stamped file system. */
  has(dev: bigint, path: string | Buffer): boolean {
    let yes = this.known.get(dev);
    if (yes === undefined) {
      yes = onStampedFileSystem(path);
      this.known.set(dev, yes);
    }
    return yes;
  }
}
