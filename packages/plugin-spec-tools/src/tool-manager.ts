import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { defineTool, escapeInvisible, makeDirs, moveAside, originatingTurn, readFileNoFollow, removeTreeSync, type ToolCallContext, ToolError, writeFileAtomic } from '@aalis/core';
import { credentialOf } from '@aalis/plugin-tools';
import { ToolSandboxSpecSchema } from '@aalis/sandbox-docker';
import { z } from 'zod';
import type { ToolsAuditLog } from './audit-log.js';
import { type BuildReport, buildTool } from './build-tool.js';
import type { SpecRunDeps } from './run-spec-tool.js';
import { type ReloadOutcome, type SpecToolRegistry, TOOL_MANAGER } from './spec-registry.js';
import { SpecToolError } from './spec-tool-error.js';
import { DEFAULT_TIMEOUT_MS, PROGRAM, SPEC_FILE, type ToolSpec, ToolSpecSchema, TOOL_NAME } from './tool-spec.js';

const Name = z.string().regex(TOOL_NAME, 'a tool name is lower-case letters, digits and _, starting with a letter');

/** What the tool manager may write: the spec's fields, and the tool's source files by plain name. */
const Definition = {
  name: Name,
  description: z.string().min(1).max(2000),
  parameters: z.record(z.string(), z.unknown()).optional(),
  /** Accepted and ignored: everything the tool manager writes is high-risk (002). */
  risk: z.enum(['low', 'medium', 'high']).optional(),
  /** Generated tools run in a container, never on the host. */
  sandbox: ToolSandboxSpecSchema.refine((s) => s.profile === 'stdio' || s.profile === 'network', {
    message: 'a generated tool runs in profile stdio or network (a container), never local or builder',
  }).optional(),
  command: z.array(z.string().min(1)).min(1).max(256),
  timeout_ms: z.number().int().positive().optional(),
  build: z.object({ command: z.array(z.string().min(1)).min(1).max(256) }).strict().optional(),
  files: z
    .record(z.string().regex(PROGRAM, 'a file is a plain name in the tool folder').refine((n) => n !== SPEC_FILE, `${SPEC_FILE} is written by the tool manager itself`), z.string().max(1024 * 1024))
    .optional(),
};

/** The tool manager's parameters: one action on one tool. */
export const ToolManagerParams = z.discriminatedUnion('action', [
  z.object({ action: z.literal('create'), ...Definition }).strict(),
  z.object({ action: z.literal('update'), ...Definition }).strict(),
  z.object({ action: z.literal('build'), name: Name }).strict(),
  z.object({ action: z.literal('delete'), name: Name }).strict(),
]);
/** A parsed {@link ToolManagerParams}. */
export type ToolManagerRequest = z.output<typeof ToolManagerParams>;

/** What a successful action returns: what it did and how the registry reloaded. */
export interface ToolManagerResult {
  readonly action: ToolManagerRequest['action'];
  readonly tool: string;
  /** The risk written (always high for create and update), and the one the caller asked for. */
  readonly risk?: 'high';
  readonly requestedRisk?: string;
  readonly build?: BuildReport;
  readonly reload: ReloadOutcome;
}

/** What the tool manager works with. */
export interface ToolManagerDeps {
  readonly registry: SpecToolRegistry;
  readonly audit: ToolsAuditLog;
  readonly run: SpecRunDeps;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** The spec the tool manager writes: the caller's definition, risk forced high, marked generated. */
function specOf(request: Extract<ToolManagerRequest, { action: 'create' | 'update' }>): ToolSpec {
  const parsed = ToolSpecSchema.safeParse({
    name: request.name,
    description: request.description,
    ...(request.parameters !== undefined ? { parameters: request.parameters } : {}),
    risk: 'high',
    sandbox: request.sandbox ?? { profile: 'stdio' },
    command: request.command,
    ...(request.timeout_ms !== undefined ? { timeout_ms: request.timeout_ms } : {}),
    ...(request.build !== undefined ? { build: request.build } : {}),
    generated: true,
  });
  if (!parsed.success) {
    throw new SpecToolError('bad-spec', `the spec for '${request.name}' is invalid: ${parsed.error.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ')}`, 'fix the named field');
  }
  try {
    z.fromJSONSchema(parsed.data.parameters as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw new SpecToolError('bad-spec', `the parameters of '${request.name}' are not a JSON Schema this daemon can validate with: ${(error as Error).message}`, 'fix parameters');
  }
  return parsed.data;
}

async function write(dir: string, spec: ToolSpec, files: Readonly<Record<string, string>>): Promise<void> {
  await makeDirs(dir);
  for (const [name, content] of Object.entries(files)) {
    // Executable so a prebuilt script can be the program; the build replaces compiled ones.
    await writeFileAtomic(join(dir, name), content, { mode: 0o755 });
  }
  await writeFileAtomic(join(dir, SPEC_FILE), `${JSON.stringify(spec, null, 2)}\n`, { mode: 0o644 });
}

async function act(request: ToolManagerRequest, deps: ToolManagerDeps, signal: AbortSignal): Promise<Omit<ToolManagerResult, 'reload'>> {
  const { registry } = deps;
  // admitManage refused it before the gate; the built-in tools may have changed during the ask
  const reserved = reservedRefusal(request, registry);
  if (reserved !== undefined) throw reserved;
  const dir = join(registry.dir, request.name);
  const present = await exists(dir);
  const noEngine = deps.run.noEngine();
  switch (request.action) {
    case 'create':
    case 'update': {
      if (request.action === 'create' && present) throw new SpecToolError('exists', `tool '${request.name}' already exists`, 'use action update, or another name');
      if (request.action === 'update' && !present) throw new SpecToolError('missing', `there is no tool '${request.name}' to update`, 'use action create');
      const spec = specOf(request);
      if (spec.build !== undefined && noEngine !== undefined) throw new SpecToolError('no-engine', `tool '${request.name}' needs a build and ${noEngine}`, 'run `aalis doctor`');
      await write(dir, spec, request.files ?? {});
      const build = spec.build !== undefined ? await buildTool(deps.run.box, dir, spec, signal) : undefined;
      return { action: request.action, tool: request.name, risk: 'high', ...(request.risk !== undefined ? { requestedRisk: request.risk } : {}), ...(build ? { build } : {}) };
    }
    case 'build': {
      const loaded = registry.get(request.name);
      if (!present) throw new SpecToolError('missing', `there is no tool '${request.name}' to build`, 'create it first');
      if (noEngine !== undefined) throw new SpecToolError('no-engine', `builds run in the builder container and ${noEngine}`, 'run `aalis doctor`');
      // A folder whose program is missing is not registered; its spec is read from the file then.
      const spec = loaded?.spec ?? (await readSpec(dir));
      return { action: 'build', tool: request.name, build: await buildTool(deps.run.box, dir, spec, signal) };
    }
    case 'delete': {
      if (!present) throw new SpecToolError('missing', `there is no tool '${request.name}' to delete`, 'list the tools with GET /api/tools');
      // Renamed aside first (never followed), then removed inside the tools directory's own trash,
      // by descriptor (core's removeTreeSync): a folder a build left symlinks or a swapped
      // directory in is removed without anything outside it touched.
      const aside = await moveAside(dir, join(registry.dir, '.trash'));
      removeTreeSync(aside);
      return { action: 'delete', tool: request.name };
    }
  }
}

async function readSpec(dir: string): Promise<ToolSpec> {
  const parsed = ToolSpecSchema.safeParse(JSON.parse((await readFileNoFollow(join(dir, SPEC_FILE))).toString('utf8')));
  if (!parsed.success) throw new SpecToolError('bad-spec', `${join(dir, SPEC_FILE)} is invalid: ${parsed.error.issues[0]?.message}`, 'update the tool');
  return parsed.data;
}

const NOT_OWNER = 'this call acts for someone who is not an owner, so it has no local effect: the tools directory is not changed for it';

/**
 * Refuses, before the approval gate, what the handler would refuse whatever the owner answered: a
 * call for someone who is not an owner (a stranger in a group could raise one high-risk card after
 * another) and a reserved name. Nobody is asked; audited as refused, with who asked.
 */
export async function admitManage(ctx: ToolCallContext, request: ToolManagerRequest, deps: ToolManagerDeps): Promise<void> {
  const refusal = credentialOf(ctx).exec === 'none' ? new SpecToolError('not-owner', NOT_OWNER, 'ask an owner') : reservedRefusal(request, deps.registry);
  if (refusal === undefined) return;
  const who = originatingTurn(ctx.turn).authorised;
  await deps.audit.append({ who: who ? `${who.platform}:${who.userId}` : 'anonymous', action: request.action, tool: request.name, result: 'refused', detail: refusal.message });
  throw new ToolError('denied', `tool_manager ${request.action} '${request.name}': ${refusal.message} (${refusal.fix}); nobody was asked.`);
}

function reservedRefusal(request: ToolManagerRequest, registry: SpecToolRegistry): SpecToolError | undefined {
  if (!registry.reserved().has(request.name)) return undefined;
  return new SpecToolError('reserved-name', `'${request.name}' is reserved (${request.name === TOOL_MANAGER ? 'the tool manager cannot change itself' : 'a built-in tool'}); the tool manager does not ${request.action} it`, 'choose another name');
}

/**
 * Runs one tool manager action: audited before it acts and after, reserved names refused,
 * and the registry reloaded after every change (a failed build too: its program is gone).
 */
export async function manageTool(ctx: ToolCallContext, request: ToolManagerRequest, deps: ToolManagerDeps): Promise<ToolManagerResult> {
  const credential = credentialOf(ctx); // a call without its credential touches nothing
  const who = originatingTurn(ctx.turn).authorised;
  const entry = { who: who ? `${who.platform}:${who.userId}` : 'anonymous', action: request.action, tool: request.name };
  await deps.audit.append({ ...entry, result: 'started' });
  try {
    if (credential.exec === 'none') {
      // admitManage refused it before the gate; the credential made after the gate may differ
      throw new SpecToolError('not-owner', NOT_OWNER, 'ask an owner');
    }
    const done = await act(request, deps, ctx.signal);
    const reload = await deps.registry.reload();
    await deps.audit.append({ ...entry, result: 'ok', detail: `loaded: ${reload.loaded.join(', ') || 'none'}` });
    return { ...done, reload };
  } catch (error) {
    const known = error instanceof SpecToolError ? error : undefined;
    const result = known?.code === 'reserved-name' || known?.code === 'not-owner' ? 'refused' : known?.code === 'build-failed' ? 'build-failed' : 'failed';
    if (known?.code === 'build-failed') await deps.registry.reload();
    await deps.audit.append({ ...entry, result, detail: (error as Error).message.slice(0, 2000) });
    if (error instanceof ToolError) throw error;
    const kind = known?.code === 'reserved-name' || known?.code === 'not-owner' ? 'denied' : known?.code === 'no-engine' ? 'unavailable' : known?.code === 'bad-spec' ? 'invalid-params' : 'failed';
    throw new ToolError(kind, `tool_manager ${request.action} '${request.name}': ${(error as Error).message}${known?.fix ? ` (${known.fix})` : ''}`);
  }
}

/** How many of a file's first lines, and how many characters of them, the ask shows. */
const HEAD_LINES = 3;
const HEAD_CHARS = 240;

/** A file as the ask shows it: its name, size, a short hash, and its first lines (escaped, cut). */
function fileShown(name: string, content: string): string {
  const bytes = Buffer.byteLength(content, 'utf8');
  const hash = createHash('sha256').update(content, 'utf8').digest('hex').slice(0, 12);
  const lines = content.split('\n');
  let head = lines.slice(0, HEAD_LINES).join('\n');
  const cut = head.length > HEAD_CHARS || lines.length > HEAD_LINES;
  if (head.length > HEAD_CHARS) head = head.slice(0, HEAD_CHARS);
  return `${JSON.stringify(name)} (${bytes} bytes, sha256 ${hash}): ${escapeInvisible(JSON.stringify(head))}${cut ? ` … (${lines.length} line${lines.length === 1 ? "" : "s"})` : ''}`;
}

/**
 * The ask's one-line summary of a tool manager call. The owner (or the AI reviewer) approves
 * what the tool will be: its profile (the network), the variables it is given (a token named in
 * `env` is handed to its code), its timeout, its build, and every file it writes with the start
 * of each, so a script that sends `$NPM_TOKEN` away is seen before it is approved, not only
 * `command: /bin/sh ./run`. Argv and names are JSON-quoted, so where one word ends is visible.
 */
export function summarizeManage(p: ToolManagerRequest): string {
  if (!('command' in p)) return `tool_manager ${p.action} ${p.name}`;
  const box = p.sandbox ?? { profile: 'stdio' as const, env: [] };
  const limits = [
    box.network !== undefined ? `network ${box.network}` : undefined,
    box.memory !== undefined ? `memory ${box.memory}` : undefined,
    box.cpus !== undefined ? `cpus ${box.cpus}` : undefined,
    box.pids_limit !== undefined ? `pids ${box.pids_limit}` : undefined,
  ].filter((l) => l !== undefined);
  const env = box.env.length > 0 ? `env ${box.env.map((e) => JSON.stringify(e)).join(', ')}` : 'env none';
  const timeout = p.timeout_ms !== undefined ? `timeout ${p.timeout_ms} ms` : `timeout ${DEFAULT_TIMEOUT_MS} ms (default)`;
  const build = p.build ? `build: ${JSON.stringify(p.build.command)}` : 'no build';
  const files = Object.entries(p.files ?? {});
  const filesShown = files.length === 0 ? 'no files' : `${files.length} file${files.length === 1 ? '' : 's'}: ${files.map(([name, content]) => fileShown(name, content)).join('; ')}`;
  return escapeInvisible(
    `tool_manager ${p.action} ${p.name}: profile ${box.profile}${limits.length > 0 ? ` (${limits.join(', ')})` : ''}, ${env}, ${timeout}; command: ${JSON.stringify(p.command)}; ${build}; ${filesShown}`,
  );
}

/** The tool manager, a built-in high-risk tool (002): create, update, build and delete spec tools. */
export function toolManagerTool(deps: ToolManagerDeps) {
  // One action at a time: two creates of one name must not both pass the "exists" check.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  return defineTool({
    name: TOOL_MANAGER,
    description:
      'Create, update, build or delete a spec tool in the tools directory. Every tool it writes is high-risk and runs in a container (profile stdio or network); builds run offline in the builder container. Reserved names (built-in tools, tool_manager) are refused.',
    params: ToolManagerParams,
    risk: 'high',
    summarize: summarizeManage,
    admit: (ctx, params) => admitManage(ctx, params, deps),
    handler: (ctx, params) => serial(() => manageTool(ctx, params, deps)),
  });
}
