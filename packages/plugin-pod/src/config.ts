import { ModelConfigSchema } from '@aalis/model';
import { z } from 'zod';

/** The agent's tools a user can allow; `finish` is always offered (it only ends the task). */
export const POD_TOOL_NAMES = ['read_file', 'list_dir', 'write_file', 'copy_into_sandbox', 'run_python', 'run_node', 'run_shell'] as const;
/** One of {@link POD_TOOL_NAMES}. */
export type PodToolName = (typeof POD_TOOL_NAMES)[number];

/** What a user can hand back to the main conversation. */
export const RETURN_KINDS = ['conclusion', 'file', 'summary', 'status'] as const;
/** One of {@link RETURN_KINDS}. */
export type ReturnKind = (typeof RETURN_KINDS)[number];

/** How the pod cleans up after itself. */
export const CLEANUP_POLICIES = ['manual', 'expire'] as const;

const SUBDIR = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,63}){0,3}$/;

/** A per-task sandbox subdirectory: up to four plain segments, no `..`, no absolute path. */
export const SubdirSchema = z
  .string()
  .regex(SUBDIR, "a sandbox subdirectory is one to four names of letters, digits, '.', '_' and '-' joined by '/' (no '..', no leading '/')")
  .refine((s) => !s.split('/').some((seg) => seg === '.' || seg === '..' || seg === '.pod'), "a sandbox subdirectory may not contain '.', '..' or '.pod'");

/** The model service the agent talks to (any OpenAI-compatible chat-completions endpoint) and the task's step limit. */
export const PodModelSchema = ModelConfigSchema.extend({
  /** Model replies per task before it is stopped as failed. */
  maxSteps: z.number().int().min(1).max(500).default(40),
})
  .strict()
  .prefault({});

/** Config of the pod plugin: the user's settings with their defaults (the README's Configuration table), and the wiring it needs. */
export const PodConfigSchema = z
  .object({
    /** The sandbox root, required for tasks; never defaulted. */
    sandboxRoot: z.string().min(1).optional(),
    /** Whether the task may write files (always only inside its directory). */
    allowWrites: z.boolean().default(true),
    /** The tools the agent may call. */
    tools: z.array(z.enum(POD_TOOL_NAMES)).default(['read_file', 'list_dir', 'write_file', 'copy_into_sandbox', 'run_python']),
    /** A task's limit. */
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(24 * 60 * 60_000)
      .default(15 * 60_000),
    /** One command's limit inside a task. */
    commandTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(60 * 60_000)
      .default(120_000),
    /** Read the main conversation's finished turns as context. */
    readContext: z.boolean().default(true),
    /** Characters of the main conversation the agent is shown at most (the newest kept). */
    contextMaxChars: z.number().int().min(0).max(1_000_000).default(24_000),
    /** What a manual return may hand back, the panel's default, and its length limit. */
    return: z
      .object({
        kinds: z.array(z.enum(RETURN_KINDS)).min(1).default([...RETURN_KINDS]),
        default: z.enum(RETURN_KINDS).default('summary'),
        maxChars: z.number().int().min(80).max(20_000).default(1_500),
      })
      .strict()
      .prefault({}),
    /** The subdirectory used when a task names none (none by default). */
    defaultSubdir: SubdirSchema.optional(),
    /** Manual clean-up only, or expiry by age too. */
    cleanup: z
      .object({
        policy: z.enum(CLEANUP_POLICIES).default('manual'),
        maxAgeHours: z
          .number()
          .positive()
          .max(24 * 365)
          .default(24 * 7),
        intervalMinutes: z
          .number()
          .positive()
          .max(24 * 60)
          .default(60),
      })
      .strict()
      .prefault({}),
    /** Export on (single-use), "remember this choice" off. */
    export: z
      .object({
        enabled: z.boolean().default(true),
        allowRemember: z.boolean().default(false),
        /** How long a confirmation code stays valid. */
        confirmTtlMs: z.number().int().min(1_000).max(24 * 60 * 60_000).default(10 * 60_000),
      })
      .strict()
      .prefault({}),
    /** Outbound network for the task's code; off unless the user allows it. */
    network: z.enum(['off', 'on']).default('off'),
    /** Ports on the loopback the task's code must not reach (the daemon's, its console's). */
    localPorts: z.array(z.number().int().min(1).max(65535)).default([]),
    /** PATH inside the sandbox. */
    path: z.string().min(1).default('/usr/local/bin:/usr/bin:/bin'),
    /** Workspace directories besides the session's binding: never a sandbox root, the default export targets. */
    workspaceRoots: z.array(z.string().min(1)).default([]),
    /** The main conversation a task reads and returns to when the caller names none. */
    session: z.string().min(1).default('main'),
    /** Tasks running at once; the rest wait in order. */
    maxConcurrent: z.number().int().min(1).max(32).default(2),
    model: PodModelSchema,
  })
  .strict();

/** Config of the pod plugin, as given. */
export type PodConfigInput = z.input<typeof PodConfigSchema>;
/** Config of the pod plugin, validated with defaults. */
export type PodConfig = z.output<typeof PodConfigSchema>;
