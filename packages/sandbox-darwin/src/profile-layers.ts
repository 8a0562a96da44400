/**
 * What the write layers govern: writes, and hard links and clones, which Seatbelt checks apart
 * from `file-write*`. Allowing them in the same rules as writes makes `ln` and `cp -c` work
 * inside the writable roots and keeps them off every landing and the control plane.
 */
export const WRITE_OPERATIONS = 'file-write* file-link file-clone';

/** How a read-denied path could be carried to a readable name: rename (unlink), hard link, clone. */
export const CARRY_OPERATIONS = 'file-write-unlink file-link file-clone';

/**
 * The layers of a profile, in the order they are written. In SBPL the last matching rule wins,
 * so this order is the policy's precedence: reads default allow → `readDeny` → `readAllowWithin`;
 * writes default deny → `write` → `writeDeny` → `writeExceptions` → `controlDeny`; last, the
 * carry-out of `readDeny` (no rename, link or clone of a read-denied path, nor a rename of the
 * folders above it), after every write layer so no exception re-allows it; and the writable
 * roots themselves, writable inside but not removed, renamed or replaced by a link (as a bind
 * mount's root cannot be on Linux); and, everywhere, no set-user-id or set-group-id bit (a file
 * the command leaves behind must not run as its owner for whoever starts it: api-reach's syscall
 * policy refuses the same on Linux and in docker).
 */
export const PROFILE_LAYERS = [
  { id: 'read.default', operation: 'file-read*', action: 'allow', field: null },
  { id: 'read.readDeny', operation: 'file-read*', action: 'deny', field: 'readDeny' },
  { id: 'read.readAllowWithin', operation: 'file-read*', action: 'allow', field: 'readAllowWithin' },
  { id: 'write.default', operation: WRITE_OPERATIONS, action: 'deny', field: null },
  { id: 'write.write', operation: WRITE_OPERATIONS, action: 'allow', field: 'write' },
  { id: 'write.writeDeny', operation: WRITE_OPERATIONS, action: 'deny', field: 'writeDeny' },
  { id: 'write.writeExceptions', operation: WRITE_OPERATIONS, action: 'allow', field: 'writeExceptions' },
  { id: 'write.controlDeny', operation: WRITE_OPERATIONS, action: 'deny', field: 'controlDeny' },
  { id: 'readDeny.carry', operation: CARRY_OPERATIONS, action: 'deny', field: 'readDeny' },
  { id: 'write.roots', operation: CARRY_OPERATIONS, action: 'deny', field: 'write' },
  { id: 'write.setugid', operation: 'file-write-setugid', action: 'deny', field: null },
] as const;

/** One entry of {@link PROFILE_LAYERS}. */
export type ProfileLayer = (typeof PROFILE_LAYERS)[number];

/** The comment line that opens a layer in the profile; fixed text, never a path. */
export function layerHeading(layer: ProfileLayer): string {
  return `;; layer ${layer.id}`;
}
