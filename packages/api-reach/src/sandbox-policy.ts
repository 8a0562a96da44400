import { z } from 'zod';
import { checkPattern } from './pattern.js';
import type { PathRule } from './rule.js';

const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * A real path as the backends take it: absolute, no NUL, no `.` or `..` segment. The messages
 * are the `problem` of a {@link SandboxRequestError}, so they read after the field's name.
 */
export const RealPathSchema = z
  .string()
  .refine((path) => !path.includes('\0'), 'contains a NUL byte (U+0000)')
  .refine((path) => path.startsWith('/'), 'is not an absolute path')
  .refine((path) => !DOT_SEGMENT.test(path), "is not a resolved path (it has a '.' or '..' segment)");

const PatternSchema = z.string().superRefine((pattern, ctx) => {
  const problem = pattern.includes('\0') ? 'contains a NUL byte (U+0000)' : checkPattern(pattern);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const MatcherSchema = z.union([z.strictObject({ path: RealPathSchema }).readonly(), z.strictObject({ pattern: PatternSchema }).readonly()]);

/** One {@link PathRule}: a path or a pattern, with optional carve-outs; nothing else. */
export const PathRuleSchema: z.ZodType<PathRule> = z.union([
  z.strictObject({ path: RealPathSchema, except: z.array(MatcherSchema).readonly().optional() }).readonly(),
  z.strictObject({ pattern: PatternSchema, except: z.array(MatcherSchema).readonly().optional() }).readonly(),
]);

/**
 * What a sandboxed command may touch, in layers that every backend translates in this order,
 * later layers winning: reads default → `readDeny` → `readAllowWithin`; writes default deny →
 * `write` → `writeDeny` → `writeExceptions` → `controlDeny`. Strict: a field it does not name is
 * refused, never ignored, since a backend that ignored it would enforce less than was meant.
 */
export const SandboxPolicySchema = z
  .strictObject({
    /** Never readable: the deny-read list. */
    readDeny: z.array(PathRuleSchema).readonly(),
    /** Readable again after `readDeny`: the session temp. */
    readAllowWithin: z.array(RealPathSchema).readonly(),
    /** Writable roots, including out-of-range writes approved for this command. */
    write: z.array(RealPathSchema).readonly(),
    /** Not writable again: the landings. */
    writeDeny: z.array(PathRuleSchema).readonly(),
    /** Writable again after `writeDeny`: node_modules under each writable root, approved landing paths. */
    writeExceptions: z.array(PathRuleSchema).readonly(),
    /** The host control plane: never writable, after every allow and exception. */
    controlDeny: z.array(PathRuleSchema).readonly(),
    /** `on`: outbound IP, minus `localPorts`. */
    network: z.enum(['off', 'on']),
    /** Ports on the host's loopback the sandbox must not connect to. */
    localPorts: z.array(z.number().int().min(1).max(65535)).readonly(),
    /** Directories whose unix sockets the sandbox may connect to. */
    unixSockets: z.array(RealPathSchema).readonly(),
    /**
     * The session temp: what `/tmp` is inside the sandbox, and where `TMPDIR` points, so a write
     * there survives the command. Optional: a backend given none says its `/tmp` is discarded.
     */
    tmp: RealPathSchema.optional(),
  })
  .readonly();

/** What a sandboxed command may touch; see {@link SandboxPolicySchema} for the layers. */
export type SandboxPolicy = z.infer<typeof SandboxPolicySchema>;

/** What was approved for one command, kept apart by the reason it was approved for. */
export interface SandboxGrants {
  /** Out-of-range writes: join the writable roots; landings under them stay denied. */
  readonly writePaths?: readonly string[];
  /** Approved landings: exactly these paths are writable again, nothing under them. */
  readonly landingPaths?: readonly string[];
  /** Network approved in the readonly tier. */
  readonly network?: boolean;
}
