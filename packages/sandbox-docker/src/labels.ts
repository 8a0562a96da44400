/** Labels every container this package starts carries, so none can be lost track of. */
export const LABELS = {
  /** Marks a container as an Aalis sandbox container. */
  sandbox: 'dev.aalis.sandbox',
  /** The daemon instance (stable across restarts): its containers are reaped at its next start. */
  instance: 'dev.aalis.instance',
  /** The daemon process run (new at every start): containers of other runs are orphans. */
  run: 'dev.aalis.run',
  /** The deployment user a container belongs to. */
  user: 'dev.aalis.user',
  /** `oneshot` or `session`. */
  kind: 'dev.aalis.kind',
} as const;
