import type { SandboxPolicy } from '@aalis/api-reach';
import { z } from 'zod';
import { DarwinProfileError } from './darwin-profile-error.js';

const matcher = z.union([z.strictObject({ path: z.string() }), z.strictObject({ pattern: z.string() })]);
const pathRule = z.union([
  z.strictObject({ path: z.string(), except: z.array(matcher).optional() }),
  z.strictObject({ pattern: z.string(), except: z.array(matcher).optional() }),
]);

/** The shape of a {@link SandboxPolicy}, checked before a profile is built from it. */
export const SandboxPolicySchema = z.strictObject({
  readDeny: z.array(pathRule),
  readAllowWithin: z.array(z.string()),
  write: z.array(z.string()),
  writeDeny: z.array(pathRule),
  writeExceptions: z.array(pathRule),
  controlDeny: z.array(pathRule),
  network: z.enum(['off', 'on']),
  localPorts: z.array(z.number().int().min(1).max(65535)),
  unixSockets: z.array(z.string()),
  // the session temp (api-reach's optional `tmp`); Seatbelt has no /tmp of its own to put it at
  tmp: z.string().optional(),
});

/** `value` as a policy, or a {@link DarwinProfileError} naming the first field that is wrong. */
export function parseSandboxPolicy(value: unknown): SandboxPolicy {
  const parsed = SandboxPolicySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  throw new DarwinProfileError(
    JSON.stringify(issue.input ?? null) ?? '',
    `policy${where}`,
    `is not a valid sandbox policy field (${issue.message})`,
    'build the policy with sandboxPolicyOf from @aalis/api-reach',
  );
}
