import { RISK_LEVELS } from '@aalis/core';
import { ToolSandboxSpecSchema } from '@aalis/sandbox-docker';
import { z } from 'zod';

/** A tool's name: what core's dispatcher accepts, and the name of its folder. */
export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The spec file of a tool folder. Only JSON: no YAML parser is among the project's dependencies. */
export const SPEC_FILE = 'tool.json';

/** The longest a spec tool may run per call (10 minutes). */
export const MAX_TOOL_TIMEOUT_MS = 600_000;

/** A file name in a tool's folder: no separator, not hidden. */
export const PROGRAM = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

const Argv = z.array(z.string().min(1).max(4096).refine((a) => !a.includes('\0'), 'an argument cannot contain a NUL byte')).min(1).max(256);

/**
 * The tool's parameters as JSON Schema: an object schema (the dispatcher validates every call's
 * params against it before anything runs).
 */
export const ParametersSchema = z.looseObject({ type: z.literal('object', { error: "parameters must be a JSON Schema with type: 'object'" }) });

/** A spec tool's timeout when its spec names none. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A tool's `tool.json` (002). `command` is the argv: a first word starting with `./` is the
 * tool's own program, in its folder; any other is looked up on the image's (or host's) PATH.
 */
export const ToolSpecSchema = z
  .object({
    name: z.string().regex(TOOL_NAME, 'a tool name is lower-case letters, digits and _, starting with a letter (at most 64)'),
    description: z.string().min(1).max(2000),
    parameters: ParametersSchema.default({ type: 'object', properties: {}, additionalProperties: false }),
    risk: z.enum(RISK_LEVELS),
    sandbox: ToolSandboxSpecSchema.default({ profile: 'local', env: [] }),
    command: Argv,
    timeout_ms: z.number().int().min(100).max(MAX_TOOL_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
    /** How the tool manager builds the program, in the builder profile: an argv run in the tool's folder. */
    build: z.object({ command: Argv }).strict().optional(),
    /** Written by the tool manager: the tool is high-risk whatever `risk` says. */
    generated: z.boolean().default(false),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const first = spec.command[0];
    if (first?.startsWith('./') && !PROGRAM.test(first.slice(2))) {
      ctx.addIssue({ code: 'custom', path: ['command', 0], message: "the tool's own program is ./<name>, a plain file name in its folder (letters, digits, _ . -)" });
    }
  });
/** A parsed {@link ToolSpecSchema}. */
export type ToolSpec = z.infer<typeof ToolSpecSchema>;
/** A spec as written (defaults not yet applied). */
export type ToolSpecInput = z.input<typeof ToolSpecSchema>;

/** The tool's own program in its folder (the `./name` first word of `command`), or undefined when it runs one of the image's. */
export function ownProgramOf(spec: Pick<ToolSpec, 'command'>): string | undefined {
  const first = spec.command[0];
  return first?.startsWith('./') ? first.slice(2) : undefined;
}
