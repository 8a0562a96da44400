import { z } from 'zod';
import { RealPathSchema, SandboxPolicySchema } from './sandbox-policy.js';
import { isLiveStdin } from './sandbox-stdin.js';

/** The longest a sandboxed command may be given: one day. A longer timeout is a mistake, not a plan. */
export const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

const text = z.string().refine((value) => !value.includes('\0'), 'contains a NUL byte (U+0000)');

const command = {
  /** The program and its arguments; never a shell string. */
  argv: z.tuple([text.refine((program) => program !== '', 'is empty: a program is needed')], text).readonly(),
  /** The whole environment of the command; nothing else is inherited. */
  env: z
    // zod drops an own `__proto__` key without a word; refuse it rather than run without it.
    .unknown()
    .refine((env) => typeof env !== 'object' || env === null || !Object.hasOwn(env, '__proto__'), 'has a variable named "__proto__", which cannot be passed on')
    .pipe(
      z
        .record(
          text.refine((name) => name !== '' && !name.includes('='), 'has a name that is empty or contains "="'),
          text,
        )
        .readonly(),
    ),
  /**
   * What the command reads on its stdin ({@link SandboxStdin}): a string or bytes given whole, or
   * a live source (a {@link StdinStream}) fed while it runs, its end the command's EOF.
   */
  stdin: z
    .union([z.string(), z.instanceof(Uint8Array), z.custom<AsyncIterable<Uint8Array>>(isLiveStdin, 'is not a string, bytes, or an AsyncIterable of bytes')])
    .optional(),
  /** Kill the whole process tree after this long; at most {@link MAX_TIMEOUT_MS}. */
  timeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS),
  /** Bytes kept of each of stdout and stderr; the rest is dropped and `truncated` set. */
  maxOutputBytes: z.number().int().positive().optional(),
  signal: z.instanceof(AbortSignal).optional(),
};

/**
 * The shape of one command to run under a policy, checked by every backend before anything
 * touches the host. Strict like the policy: an unknown field is refused.
 */
export const SandboxRunRequestSchema = z
  .strictObject({
    ...command,
    /** A real path the command starts in. */
    cwd: RealPathSchema,
    policy: SandboxPolicySchema,
    /**
     * Keep the writes the sandbox refused aside (never on the host) so that, once approved, they
     * can be committed without running the command again ({@link SandboxService.commitKept}).
     * A backend that cannot keep them ignores it and returns no `keptWrites`.
     */
    keepRefused: z.boolean().optional(),
  })
  .readonly();

/** One command to run under a policy. The env comes from the credential's `processEnv('sandbox')`. */
export type SandboxRunRequest = z.infer<typeof SandboxRunRequestSchema>;

/**
 * A command for a runner whose cwd and policy were fixed when it opened (a docker session
 * container): the request's command fields, the env optional (the runner's own when absent).
 */
export const SandboxCommandSchema = z.strictObject({ ...command, env: command.env.optional() }).readonly();

/** One command for a runner that already has its cwd and policy; see {@link SandboxCommandSchema}. */
export type SandboxCommand = z.infer<typeof SandboxCommandSchema>;
