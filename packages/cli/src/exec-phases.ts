/**
 * The phases of one `aalis exec`, as `performance.mark` entries (`aalis:<phase>`): cheap enough for
 * every run, read only by `bench/startup.ts` (which preloads `bench/phase-marks.cjs` to print them
 * at exit), so a slow phase is found by measuring, not guessing.
 */
export const EXEC_PHASES = [
  /** exec's modules are evaluated and its entry runs */
  'loaded',
  /** the kernel with the reach stack is started, the sandbox's probe started */
  'runtime',
  /** the sandbox's probe answered */
  'probed',
  /** the command ran, its writes committed and the audit written */
  'ran',
  /** the runtime stopped (the sandbox closed, the probe's clean-up done) */
  'stopped',
] as const;

/** One of {@link EXEC_PHASES}. */
export type ExecPhase = (typeof EXEC_PHASES)[number];

/** Marks the end of `phase` on this process's performance timeline. */
export function markPhase(phase: ExecPhase): void {
  performance.mark(`aalis:${phase}`);
}
