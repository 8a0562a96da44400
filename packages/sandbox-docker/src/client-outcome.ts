import type { AttachOutcome } from './attach-client.js';

/** What the docker client prints when a connection it had to the engine broke while the command ran. */
export function lostMidRun(stderr: string): boolean {
  return /error waiting for container|unexpected EOF|connection reset by peer|broken pipe/i.test(stderr);
}

/** What the docker client prints when it lost the engine, or could not reach it, for a command. */
export function clientLostEngine(stderr: string): boolean {
  return lostMidRun(stderr) || /error during connect|Cannot connect to the Docker daemon/i.test(stderr);
}

/**
 * Whether the client failed before the command ran: the engine refused the container (125 with
 * `docker: …`), or the runtime or the engine's init could not exec the entry (126/127).
 */
export function startFailed(outcome: AttachOutcome): boolean {
  if (outcome.code === 125) return /^docker: /m.test(outcome.stderr) && !lostMidRun(outcome.stderr);
  if (outcome.code === 126 || outcome.code === 127) return /^docker: Error response from daemon: .*OCI runtime/m.test(outcome.stderr) || missingDeadlineProgram(outcome.stderr);
  return false;
}


/** The entry's `timeout` is not in the image (the runtime's or the engine init's words for it). */
export function missingDeadlineProgram(stderr: string): boolean {
  return /exec: "timeout": executable file not found|^\[FATAL tini \(\d+\)\] exec timeout failed/m.test(stderr);
}
