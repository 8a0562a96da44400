import { z } from 'zod';
import { SANDBOX_BACKENDS } from './sandbox.js';

/** One mount of a plan: what is at `target` inside, and where it comes from. */
export const PlanMountSchema = z
  .strictObject({
    /** The path inside the sandbox. */
    target: z.string(),
    /** `ro`/`rw`: the host's entry at `source`; `hidden`: an empty stand-in; `tmpfs`: a fresh empty file system. */
    mode: z.enum(['ro', 'rw', 'hidden', 'tmpfs']),
    /** The host path mounted there, when it is one. */
    source: z.string().optional(),
    /** Why the backend mounts it (its own words: a writable root, a deny rule, a socket, …). */
    why: z.string(),
  })
  .readonly();

/** A file the plan hands the started program besides its argv: a seccomp program on an fd, a profile. */
export const PlanFileSchema = z
  .strictObject({
    /** What it is, in a word: `seccomp`, `profile`, `args`. */
    name: z.string(),
    /** Where the program finds it: an fd number, a path, or an argv position. */
    at: z.string(),
    /** Its text when it is text (a Seatbelt profile); otherwise its size and digest. */
    text: z.string().optional(),
    bytes: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .readonly();

/** A step the backend takes before or after the program, which the argv alone does not show. */
export const PlanStepSchema = z.strictObject({ step: z.string(), detail: z.string() }).readonly();

/**
 * What a backend will do for one run request, as data: the program it starts (`argv`, whose
 * first element is the program) with exactly this environment, the mounts and files that argv
 * sets up, and the steps around it. A backend's `run` executes the plan it built this way, and
 * `aalis policy` prints one, so what is shown is what runs. Paths of the run's own scratch
 * directory, made only when it runs, read {@link PLAN_RUN_DIR} in a plan made without running.
 */
export const SandboxPlanSchema = z
  .strictObject({
    backend: z.enum(SANDBOX_BACKENDS),
    argv: z.array(z.string()).min(1).readonly(),
    /** The environment of the started program, nothing inherited. */
    env: z.record(z.string(), z.string()).readonly(),
    mounts: z.array(PlanMountSchema).readonly(),
    files: z.array(PlanFileSchema).readonly(),
    pre: z.array(PlanStepSchema).readonly(),
    post: z.array(PlanStepSchema).readonly(),
  })
  .readonly();

/** See {@link SandboxPlanSchema}. */
export type SandboxPlan = z.infer<typeof SandboxPlanSchema>;
/** One mount of a {@link SandboxPlan}. */
export type PlanMount = z.infer<typeof PlanMountSchema>;
/** One file of a {@link SandboxPlan}. */
export type PlanFile = z.infer<typeof PlanFileSchema>;
/** One step of a {@link SandboxPlan}. */
export type PlanStep = z.infer<typeof PlanStepSchema>;

/** Stands for the run's own scratch directory in a plan made without running (it has no name yet). */
export const PLAN_RUN_DIR = '<run>';
