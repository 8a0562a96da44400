import type { SandboxRunRequest } from '@aalis/api-reach';
import { z } from 'zod';
import { DarwinProfileError } from './darwin-profile-error.js';
import { SandboxPolicySchema } from './sandbox-policy-schema.js';

const noNul = (what: string) => z.string().refine((text) => !text.includes('\0'), `${what} contains NUL`);

/** The shape of a {@link SandboxRunRequest} (without the abort signal), checked before anything runs. */
export const SandboxRunRequestSchema = z.object({
  argv: z.tuple([noNul('the program').min(1)], noNul('an argument')),
  cwd: noNul('cwd').refine((path) => path.startsWith('/'), 'cwd must be an absolute real path'),
  env: z.record(
    noNul('a variable name').refine((key) => key !== '' && !key.includes('='), 'a variable name is empty or contains "="'),
    noNul('a variable value'),
  ),
  stdin: z.union([z.string(), z.instanceof(Uint8Array)]).optional(),
  timeoutMs: z.number().int().positive().max(24 * 60 * 60 * 1000),
  maxOutputBytes: z.number().int().positive().optional(),
  policy: SandboxPolicySchema,
});

/** `request` checked, or a {@link DarwinProfileError} naming the first field that is wrong. */
export function parseRunRequest(request: SandboxRunRequest): z.infer<typeof SandboxRunRequestSchema> {
  const { signal: _signal, ...rest } = request;
  const parsed = SandboxRunRequestSchema.safeParse(rest);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  throw new DarwinProfileError(
    JSON.stringify(issue.input ?? null) ?? '',
    `request${where}`,
    `is not a valid run request (${issue.message})`,
    'pass argv as separate strings, an absolute cwd, string env values and a positive timeoutMs',
  );
}
