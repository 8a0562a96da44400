/**
 * The one way a container is removed: killed if it runs, and with its anonymous volumes. An image
 * that declares a `VOLUME` gets one per container, writable whatever `--read-only` says; `--rm`
 * removes it when the container exits on its own, but a plain `rm --force` (a timeout, an abort, a
 * session closed, orphans swept) left it in the engine with whatever the command wrote there.
 */
export const REMOVE_CONTAINER = ['rm', '--force', '--volumes'] as const;
