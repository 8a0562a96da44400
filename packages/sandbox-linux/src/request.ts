import type { SandboxRunRequest } from '@aalis/api-reach';
import { z } from 'zod';

const absolute = z.string().refine((p) => p.startsWith('/'), 'must be an absolute real path');
const rule = z.union([
  z.object({ path: absolute, except: z.array(z.union([z.object({ path: absolute }), z.object({ pattern: z.string() })])).optional() }),
  z.object({ pattern: z.string(), except: z.array(z.union([z.object({ path: absolute }), z.object({ pattern: z.string() })])).optional() }),
]);

/** The shape a run request must have; checked before anything touches the host. */
export const RunRequestSchema = z.object({
  argv: z.array(z.string()).min(1),
  cwd: absolute,
  env: z.record(z.string(), z.string()),
  stdin: z.union([z.string(), z.instanceof(Uint8Array)]).optional(),
  timeoutMs: z.number().int().positive(),
  maxOutputBytes: z.number().int().positive().optional(),
  signal: z.instanceof(AbortSignal).optional(),
  policy: z.object({
    readDeny: z.array(rule),
    readAllowWithin: z.array(absolute),
    write: z.array(absolute),
    writeDeny: z.array(rule),
    writeExceptions: z.array(rule),
    controlDeny: z.array(rule),
    network: z.enum(['off', 'on']),
    localPorts: z.array(z.number().int().min(1).max(65535)),
    unixSockets: z.array(absolute),
    tmp: absolute.optional(),
  }),
});

/** A request that failed validation: the message names the field. */
export class RunRequestError extends Error {
  override readonly name = 'RunRequestError';
}

/** Validates a request; throws {@link RunRequestError} naming what is wrong. */
export function checkRunRequest(request: SandboxRunRequest): SandboxRunRequest {
  const r = RunRequestSchema.safeParse(request);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new RunRequestError(`invalid sandbox run request at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return request;
}
