/**
 * A policy that cannot be turned into container mounts safely, so nothing runs. `rule` names
 * what refused it, `fix` what the user can do.
 */
export class MountPolicyError extends Error {
  override readonly name = 'MountPolicyError';
  constructor(
    readonly rule: string,
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}
