/**
 * A policy could not be turned into a Seatbelt profile, so nothing runs (fail closed).
 * `refused` is the value that was refused, `rule` where it came from (for example
 * `writeDeny[3].except[0]`), `fix` what the caller can do about it.
 */
export class DarwinProfileError extends Error {
  override readonly name = 'DarwinProfileError';
  constructor(
    readonly refused: string,
    readonly rule: string,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`the Seatbelt profile was not built, so the command did not run: ${rule} ${JSON.stringify(refused)} ${problem}. Fix: ${fix}`);
  }
}
