import { AalisError } from '@aalis/core';

/**
 * A policy could not be turned into a Seatbelt profile, so nothing runs (fail closed).
 * `refused` is the value that was refused, `rule` where it came from (for example
 * `writeDeny[3].except[0]`), `fix` what the caller can do about it.
 */
export class DarwinProfileError extends AalisError<'profile-not-built'> {
  override readonly name = 'DarwinProfileError';
  declare readonly fix: string;
  constructor(
    readonly refused: string,
    readonly rule: string,
    readonly problem: string,
    fix: string,
  ) {
    super('profile-not-built', `the Seatbelt profile was not built, so the command did not run: ${rule} ${JSON.stringify(refused)} ${problem}. Fix: ${fix}`, { fix });
  }
}
