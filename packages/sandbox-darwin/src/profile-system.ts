import {
  BASE_MACH_SERVICES,
  BASELINE_RULES,
  SHM_OWN,
  SHM_READ,
  SYSCTL_NEVER_PREFIX,
  SYSCTL_READ_NAMES,
  SYSCTL_READ_PREFIXES,
  SYSCTL_WRITE_NAMES,
} from './profile-baseline.js';
import { sbplString } from './sbpl-string.js';

function filters(kind: string, values: readonly string[]): string {
  return values.map((value) => `(${kind} ${sbplString(value, 'baseline')})`).join(' ');
}

/**
 * The baseline of every profile, before the file layers: processes, Mach lookups, sysctls by
 * name (with `kern.procargs*` denied after the allow) and shared memory by name.
 */
export function systemLines(): string[] {
  return [
    ';; baseline: processes, signals inside the sandbox, reads of system state',
    ...BASELINE_RULES,
    `(allow mach-lookup ${filters('global-name', BASE_MACH_SERVICES)})`,
    `(allow sysctl-read ${filters('sysctl-name', SYSCTL_READ_NAMES)} ${filters('sysctl-name-prefix', SYSCTL_READ_PREFIXES)})`,
    `(deny sysctl-read ${filters('sysctl-name-prefix', [SYSCTL_NEVER_PREFIX])})`,
    `(allow sysctl-write ${filters('sysctl-name', SYSCTL_WRITE_NAMES)})`,
    `(allow ipc-posix-shm-read* ${filters('ipc-posix-name', SHM_READ.names)} ${filters('ipc-posix-name-prefix', SHM_READ.prefixes)})`,
    `(allow ipc-posix-shm* ${filters('ipc-posix-name-prefix', SHM_OWN.prefixes)} ${filters('ipc-posix-name-regex', SHM_OWN.regexes)})`,
  ];
}
