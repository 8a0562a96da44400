import { AalisError, type AalisErrorOptions } from '@aalis/core';

/** What kind of input was refused: a rule pattern, a path, a malformed request or reach input, or a policy asked of a reach that has none. */
export const REACH_INPUT_PROBLEMS = ['pattern', 'path', 'request', 'no-sandbox-policy'] as const;
/** One of {@link REACH_INPUT_PROBLEMS}. */
export type ReachInputProblem = (typeof REACH_INPUT_PROBLEMS)[number];

/**
 * Input the reach contract refuses rather than guess at (it fails closed): the message says what
 * was refused, by which rule, and what the caller can do instead.
 */
export class ReachInputError extends AalisError<ReachInputProblem> {
  override readonly name = 'ReachInputError';
  constructor(
    readonly problem: ReachInputProblem,
    message: string,
    options?: AalisErrorOptions,
  ) {
    super(problem, message, options);
  }
}
