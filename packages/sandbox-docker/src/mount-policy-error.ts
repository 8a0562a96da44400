import { AalisError } from '@aalis/core';

/**
 * A policy that cannot be turned into container mounts safely, so nothing runs. `rule` names
 * what refused it, `fix` what the user can do.
 */
export class MountPolicyError extends AalisError<'mount-policy'> {
  override readonly name = 'MountPolicyError';
  declare readonly fix: string;
  constructor(
    readonly rule: string,
    message: string,
    fix: string,
  ) {
    super('mount-policy', message, { fix });
  }
}
