import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { LABELS } from './labels.js';

/**
 * The process that started a container, as labels on it: enough to tell later, from the same
 * machine, whether that process still lives. `boot` and `pidns` pin the pid to one pid space of
 * one boot; `start` tells a live owner from a new process that got the same pid.
 */
export interface OwnerIdentity {
  readonly host: string;
  /** `/proc/sys/kernel/random/boot_id`: a reboot ends every owner. Empty where there is none. */
  readonly boot: string;
  /** The pid namespace (`/proc/self/ns/pid`), so a pid is never read in the wrong pid space. */
  readonly pidns: string;
  readonly pid: number;
  /** The process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22). Empty where unknown. */
  readonly start: string;
}

/** What is known of a container's owner: only `dead` lets a container be reaped for it. */
export type OwnerState = 'alive' | 'dead' | 'unknown';

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return fallback;
  }
}

/** Field 22 of `/proc/<pid>/stat` (after the command name, which may hold spaces and parentheses). */
function startTimeOf(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

let self: OwnerIdentity | undefined;

/** This process as a container owner; taken once. */
export function currentOwner(): OwnerIdentity {
  self ??= Object.freeze({
    host: hostname(),
    boot: readOr('/proc/sys/kernel/random/boot_id', ''),
    pidns: pidNamespace(),
    pid: process.pid,
    start: startTimeOf(process.pid) ?? '',
  });
  return self;
}

/**
 * This process's run: containers labelled with another run are candidates for reaping (and only
 * taken when their owner is provably dead). Shared by every sandbox of the process.
 */
export const PROCESS_RUN = randomUUID();

/** The labels that name a container's owner. */
export function ownerLabels(owner: OwnerIdentity = currentOwner()): Record<string, string> {
  return {
    [LABELS.ownerHost]: owner.host,
    [LABELS.ownerBoot]: owner.boot,
    [LABELS.ownerPidns]: owner.pidns,
    [LABELS.ownerPid]: String(owner.pid),
    [LABELS.ownerStart]: owner.start,
  };
}

/**
 * Whether the owner a container's labels name is alive, judged from this process. `dead` only
 * when it is provable: the same host, boot and pid namespace as here, and no process with that
 * pid and start time. Another machine, another boot id on the same host name, labels missing or
 * a start time nobody can read: `unknown`, and the container is left alone.
 */
export function ownerStateOf(labels: Readonly<Record<string, string | undefined>>, here: OwnerIdentity = currentOwner()): OwnerState {
  const host = labels[LABELS.ownerHost];
  const boot = labels[LABELS.ownerBoot];
  const pidns = labels[LABELS.ownerPidns];
  const pid = Number(labels[LABELS.ownerPid]);
  const start = labels[LABELS.ownerStart];
  if (host === undefined || boot === undefined || pidns === undefined || start === undefined || !Number.isInteger(pid) || pid <= 0) return 'unknown';
  if (host !== here.host || boot === '' || boot !== here.boot || pidns === '' || pidns !== here.pidns || start === '') return 'unknown';
  const now = startTimeOf(pid);
  if (now === undefined) return 'dead'; // no such process in this pid space
  return now === start ? 'alive' : 'dead'; // the pid was reused by a newer process
}
