import { type SandboxPolicy, SandboxPolicySchema, sandboxInputProblem } from '@aalis/api-reach';
import { DarwinProfileError } from './darwin-profile-error.js';

/**
 * `value` checked against the contract's {@link SandboxPolicySchema}, or a
 * {@link DarwinProfileError} naming the first field that is wrong (profile building is pure, so
 * it answers in the profile's own error rather than the run's).
 */
export function parseSandboxPolicy(value: unknown): SandboxPolicy {
  const parsed = SandboxPolicySchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const { field, problem } = sandboxInputProblem(parsed.error, 'policy');
  const issue = parsed.error.issues[0]!;
  throw new DarwinProfileError(JSON.stringify(issue.input ?? null) ?? '', field, problem, 'build the policy with sandboxPolicyOf from @aalis/api-reach');
}
