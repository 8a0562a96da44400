/**
 * The layers of a profile, in the order they are written. In SBPL the last matching rule wins,
 * so this order is the policy's precedence: reads default allow → `readDeny` → `readAllowWithin`;
 * writes default deny → `write` → `writeDeny` → `writeExceptions` → `controlDeny`.
 */
export const PROFILE_LAYERS = [
  { id: 'read.default', operation: 'file-read*', action: 'allow', field: null },
  { id: 'read.readDeny', operation: 'file-read*', action: 'deny', field: 'readDeny' },
  { id: 'read.readAllowWithin', operation: 'file-read*', action: 'allow', field: 'readAllowWithin' },
  { id: 'write.default', operation: 'file-write*', action: 'deny', field: null },
  { id: 'write.write', operation: 'file-write*', action: 'allow', field: 'write' },
  { id: 'write.writeDeny', operation: 'file-write*', action: 'deny', field: 'writeDeny' },
  { id: 'write.writeExceptions', operation: 'file-write*', action: 'allow', field: 'writeExceptions' },
  { id: 'write.controlDeny', operation: 'file-write*', action: 'deny', field: 'controlDeny' },
] as const;

/** One entry of {@link PROFILE_LAYERS}. */
export type ProfileLayer = (typeof PROFILE_LAYERS)[number];

/** The comment line that opens a layer in the profile; fixed text, never a path. */
export function layerHeading(layer: ProfileLayer): string {
  return `;; layer ${layer.id}`;
}
