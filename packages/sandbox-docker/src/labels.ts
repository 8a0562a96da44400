/** Labels every container this package starts carries, so none can be lost track of. */
export const LABELS = {
  /** Marks a container as an Aalis sandbox container. */
  sandbox: 'dev.aalis.sandbox',
  /** The daemon instance (unique per data directory, stable across restarts). */
  instance: 'dev.aalis.instance',
  /** The process run (new at every start): containers of other runs are reaped once their owner is dead. */
  run: 'dev.aalis.run',
  /** The deployment user a container belongs to. */
  user: 'dev.aalis.user',
  /** `oneshot` or `session`. */
  kind: 'dev.aalis.kind',
  /** When the container's own `timeout` kills it (ms since the epoch): past it, it is gone or reapable. */
  deadline: 'dev.aalis.deadline',
  /**
   * The host paths the container can write (its writable mounts, as JSON): another run's set-up
   * holds it still only when it can move a path that set-up resolves (hold-still.ts).
   */
  writable: 'dev.aalis.writable',
  /** The owner process: host name, boot id, pid namespace, pid and start time (see owner.ts). */
  ownerHost: 'dev.aalis.owner.host',
  ownerBoot: 'dev.aalis.owner.boot',
  ownerPidns: 'dev.aalis.owner.pidns',
  ownerPid: 'dev.aalis.owner.pid',
  ownerStart: 'dev.aalis.owner.start',
} as const;
