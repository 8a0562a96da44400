import { isAbsolute } from 'node:path';
import { z } from 'zod';

/** Where the daemon runs commands: this machine's sandbox, or hardened containers. */
export const DEPLOYMENT_CHOICES = ['host', 'docker'] as const;

const Identity = z.object({
  platform: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a platform is a lower-case name such as cli, qq or telegram'),
  userId: z.string().min(1).max(200),
});

/** What a project is made from: the answers to the prompts, or the flags with `--yes`. */
export const AnswersSchema = z
  .object({
    /** The project's folder name, also its package name. */
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,213}$/, 'a project name is lower-case letters, digits, . _ - (it becomes the npm package name)'),
    owner: Identity,
    deployment: z.enum(DEPLOYMENT_CHOICES),
    model: z
      .object({
        baseURL: z
          .string()
          .url('the model endpoint is a URL such as http://127.0.0.1:11434/v1')
          .refine((u) => /^https?:\/\/[^/]/.test(u), 'the model endpoint is an http:// or https:// URL such as http://127.0.0.1:11434/v1'),
        model: z.string().min(1),
        /** The environment variable holding the key; the key itself is never written. */
        apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name is upper-case letters, digits and _'),
      })
      .strict(),
    /** The Isolation Pod's sandbox root: absolute, never the project; absent until the person names one. */
    sandboxRoot: z.string().refine(isAbsolute, 'the sandbox root is an absolute path').optional(),
  })
  .strict();
/** The answers, validated. */
export type Answers = z.infer<typeof AnswersSchema>;
