import { matchesRule, type PathRule } from '@aalis/api-reach';

/**
 * Files no tool writes in the sandboxed tiers, whatever was approved (docs/reach-contract.md, the three lists): `.env`,
 * `.env.*`, `*.pem`, `*.key`. They are added to the sandbox's `controlDeny`, the layer that
 * no grant or exception lifts.
 */
export const NEVER_WRITTEN: readonly PathRule[] = Object.freeze([
  { pattern: '^.*/\\.env(\\.[^/]*)?$' },
  { pattern: '^.*\\.pem$' },
  { pattern: '^.*\\.key$' },
]);

/** Whether a real path is one of {@link NEVER_WRITTEN}. */
export function isNeverWritten(realPath: string, platform: NodeJS.Platform): boolean {
  return NEVER_WRITTEN.some((rule) => matchesRule(rule, realPath, platform));
}

/** The refusal for a never-written file. */
export function neverWrittenMessage(realPath: string): string {
  return `writing ${realPath} was refused (rule: secret-file): .env, .env.*, *.pem and *.key files are never written by a tool in the sandboxed tiers, whatever is approved. This cannot be requested; write the secret yourself, outside the agent.`;
}
