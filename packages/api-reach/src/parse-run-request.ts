import { z } from 'zod';
import { MAX_TIMEOUT_MS, type SandboxCommand, SandboxCommandSchema, type SandboxRunRequest, SandboxRunRequestSchema } from './run-request.js';
import type { SandboxPolicy } from './sandbox-policy.js';
import { type SandboxBackend, SandboxUnavailableError } from './sandbox.js';

/**
 * A run request that breaks the contract, so the command did not run. `field` is where
 * (`argv[1]`, `policy.controlDeny`), `problem` what is wrong there, `fix` what the caller can do.
 * It is a {@link SandboxUnavailableError}: callers that handle "did not run" handle this too.
 */
export class SandboxRequestError extends SandboxUnavailableError {
  override readonly name = 'SandboxRequestError';
  constructor(
    backend: SandboxBackend,
    readonly field: string,
    readonly problem: string,
    fix: string,
  ) {
    super(backend, `the run request is invalid: ${field} ${problem}`, fix, 'invalid-run-request');
  }
}

/** What to do about a wrong field, by the request's top-level field it lies in. */
const FIXES = {
  argv: 'pass the program and each argument as separate strings, the program not empty, none with a NUL byte',
  cwd: 'pass the real path of the working directory (absolute, symlinks and . / .. resolved)',
  env: 'pass the environment as string names (not empty, no "=") and string values, none with a NUL byte',
  stdin: 'pass stdin as a string or bytes (given whole), or a StdinStream from @aalis/api-reach (fed while the command runs)',
  timeoutMs: `pass a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS} (one day)`,
  maxOutputBytes: 'pass a positive whole number of bytes, or leave it out for the default',
  policy: 'build the policy with sandboxPolicyOf from @aalis/api-reach: real absolute paths, patterns in the contract subset, exactly the fields of SandboxPolicy',
  signal: 'pass an AbortSignal, or leave it out',
  keepRefused: 'pass true or false, or leave it out',
} as const satisfies Record<keyof SandboxRunRequest, string>;

const ANY_FIELD = 'pass an object with the fields of SandboxRunRequest (argv, cwd, env, timeoutMs, policy; optionally stdin, maxOutputBytes, signal, keepRefused) and no others';

/** Where a zod issue is, written as code would name it: `argv[1]`, `policy.writeDeny[0].path`. */
function fieldOf(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

/**
 * The first problem zod found, as a field and what is wrong there in words a person can act on;
 * shared by every backend so the same input reads the same everywhere. Parse with
 * `reportInput: true`, or a missing field cannot be told from a wrong one. `within` names the value
 * that was parsed when it is part of a request (`policy`), so fields read `policy.write[0]`.
 */
export function sandboxInputProblem(error: z.ZodError, within?: string): { readonly field: string; readonly problem: string; readonly top: string | undefined } {
  const issue = error.issues[0]!;
  const path = within === undefined ? [...issue.path] : [within, ...issue.path];
  if (issue.code === 'unrecognized_keys') path.push(issue.keys[0]!);
  const field = fieldOf(path) || 'the run request';
  const top = path[0] === undefined ? undefined : String(path[0]);
  if (issue.code === 'unrecognized_keys') return { field, problem: 'is not a field of the contract (a backend would ignore it, so it is refused)', top };
  if (issue.code === 'invalid_type' && issue.input === undefined) return { field, problem: 'is missing', top };
  if (issue.code === 'too_big' && path.at(-1) === 'timeoutMs') return { field, problem: `is over the maximum of ${MAX_TIMEOUT_MS} ms (one day)`, top };
  if (issue.code === 'custom') return { field, problem: issue.message, top };
  if (issue.code === 'invalid_key') return { field, problem: issue.issues[0]?.message ?? 'is not a valid name', top };
  return { field, problem: `is not valid (${issue.message})`, top };
}

function parseWith<T>(schema: z.ZodType<T>, backend: SandboxBackend, value: unknown): T {
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const { field, problem, top } = sandboxInputProblem(parsed.error);
  const fix = top !== undefined && Object.hasOwn(FIXES, top) ? FIXES[top as keyof typeof FIXES] : ANY_FIELD;
  throw new SandboxRequestError(backend, field, problem, fix);
}

/**
 * Policies already checked, by the object given: only ones that are frozen data all the way down
 * ({@link isFrozenData}), so what was checked is what is there now. A daemon passes the same
 * policy object to every call of a conversation (plugin-reach keeps it per reach), and checking
 * its few hundred rules again (each pattern compiled) held the daemon's thread on every call.
 */
const checkedPolicies = new WeakMap<object, SandboxPolicy>();

/** The request's fields without its policy's contents, for a policy already checked. */
const RequestOfCheckedPolicy = SandboxRunRequestSchema.unwrap()
  .extend({ policy: z.custom<SandboxPolicy>((value) => typeof value === 'object' && value !== null && checkedPolicies.has(value)) })
  .readonly();

/**
 * Whether `value` is plain data that cannot change: primitives, or frozen plain objects and
 * arrays (no accessors, no other prototype) whose values are too, at most `depth` levels down.
 * A getter could answer differently after the check; a prototype could add a field.
 */
export function isFrozenData(value: unknown, depth = 8): boolean {
  if (typeof value === 'function') return false;
  if (typeof value !== 'object' || value === null) return true;
  if (depth === 0 || !Object.isFrozen(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== Array.prototype && prototype !== null) return false;
  for (const field of Object.values(Object.getOwnPropertyDescriptors(value))) {
    if (!('value' in field) || !isFrozenData(field.value, depth - 1)) return false;
  }
  return true;
}

/**
 * `request` checked against the sandbox contract ({@link SandboxRunRequestSchema}), or a
 * {@link SandboxRequestError} naming the first field that is wrong. Every backend calls this at
 * its entry, before it looks at the host, so the same input gets the same answer from each. A
 * policy object that is frozen data is checked once: the next request with the same object gets
 * the same checked policy back (so a backend's per-policy caches hold across calls).
 */
export function parseRunRequest(backend: SandboxBackend, request: unknown): SandboxRunRequest {
  const policy = typeof request === 'object' && request !== null ? (request as { policy?: unknown }).policy : undefined;
  // Kept only once found frozen data, which it then stays (a frozen data field cannot change, nor
  // the prototype of an object that cannot be extended): no walk again on the next request.
  const checked = typeof policy === 'object' && policy !== null ? checkedPolicies.get(policy) : undefined;
  if (checked !== undefined) return Object.freeze({ ...parseWith(RequestOfCheckedPolicy, backend, request), policy: checked });
  const parsed = parseWith(SandboxRunRequestSchema, backend, request);
  if (typeof policy === 'object' && policy !== null && isFrozenData(policy)) checkedPolicies.set(policy, parsed.policy);
  return parsed;
}

/** {@link parseRunRequest} for a command to a runner that already has its cwd and policy. */
export function parseSandboxCommand(backend: SandboxBackend, command: unknown): SandboxCommand {
  return parseWith(SandboxCommandSchema, backend, command);
}
