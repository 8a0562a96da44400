import { lstat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { inKernelTree, type MovedAside, pathIsUnder, type SandboxPolicy, type SandboxRunResult, type SandboxService, SandboxUnavailableError, sandboxPolicyAllows } from '@aalis/api-reach';
import { AalisError, copyFileAtomic, listDirNoFollow, makeDirs, openForRead, openWalkedFile, SafeFileError, shownBytes, type TempRecorder, utf8NameOf, walkTreeNoFollow, writeFileAtomic } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { z } from 'zod';
import type { PodToolName } from './config.js';
import type { ModelTool } from '@aalis/model';
import type { TaskDirs } from './task.js';

const MAX_READ = 256 * 1024;
const MAX_COPY_BYTES = 256 * 1024 * 1024;
const MAX_RUN_OUTPUT = 1024 * 1024;
const platform = process.platform;

/** What a tool handler gets about the task it works for. */
export interface AgentToolContext {
  readonly dirs: TaskDirs;
  readonly policy: SandboxPolicy;
  readonly env: Readonly<Record<string, string>>;
  readonly sandbox: SandboxService;
  readonly commandTimeoutMs: number;
  readonly signal: AbortSignal;
  /** Where host-side writes record their temp files, so the pod's next start removes what a kill left. */
  readonly journal?: TempRecorder;
}

/** A tool's outcome: a value (and the run, for code), or a refusal or failure the agent is told about. */
export type AgentToolOutcome =
  | { readonly ok: true; readonly value: unknown; readonly run?: SandboxRunResult }
  | { readonly ok: false; readonly refused: boolean; readonly rule: string; readonly message: string; readonly run?: SandboxRunResult };

/** One of the agent's tools. */
export interface AgentTool {
  readonly name: PodToolName | 'finish';
  readonly description: string;
  readonly params: z.ZodType;
  run(ctx: AgentToolContext, params: unknown): Promise<AgentToolOutcome>;
}

/** A tool call the task's rules refused; `rule` (its code) names which. */
class Refusal extends AalisError {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(rule, message);
  }
}

function tool<P extends z.ZodType>(name: AgentTool['name'], description: string, params: P, run: (ctx: AgentToolContext, p: z.output<P>) => Promise<AgentToolOutcome | unknown>): AgentTool {
  return {
    name,
    description,
    params,
    async run(ctx, raw) {
      const parsed = params.safeParse(raw);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(params)'}: ${i.message}`).join('; ');
        return { ok: false, refused: false, rule: 'invalid-params', message: `tool '${name}' refused its parameters, nothing ran: ${issues}` };
      }
      try {
        const result = await run(ctx, parsed.data);
        if (isOutcome(result)) return result;
        return { ok: true, value: result };
      } catch (error) {
        if (error instanceof Refusal) return { ok: false, refused: true, rule: error.rule, message: error.message };
        // The safe file layer refused: what is at the name is not what was judged (a symlink the task's code planted, a swap).
        if (error instanceof SafeFileError) {
          return { ok: false, refused: true, rule: error.code, message: `the host-side tool was refused, nothing was read or written there: ${error.message}` };
        }
        return { ok: false, refused: false, rule: 'failed', message: `tool '${name}' failed: ${(error as Error).message}` };
      }
    },
  };
}

function isOutcome(value: unknown): value is AgentToolOutcome {
  return typeof value === 'object' && value !== null && 'ok' in value && typeof (value as { ok: unknown }).ok === 'boolean' && ('value' in value || 'rule' in value);
}

/** Whether a host path is in the kernel's trees, as the daemon's process sees them (Linux). */
function isKernelTree(path: string): boolean {
  return platform === 'linux' && inKernelTree(path);
}

/**
 * The pod's host-side tools run in the daemon's process, where `/proc` is the daemon's own (its
 * memory and environment hold the owner's token and the model's keys) and `/sys` the host
 * kernel's: refused whatever the policy says (api-reach's `kernel-tree` rule, the same for the
 * main agent's tools). A task reads them from a command, in its sandbox's own `/proc`.
 */
function refuseKernelTree(path: string): void {
  if (isKernelTree(path)) {
    throw new Refusal('kernel-tree', `${path} is in /proc or /sys, which a host-side tool reaches as the daemon's own process and the host's kernel (its memory, environment and keys); it cannot be requested. Read it from a command instead: the task's sandbox has a /proc of its own.`);
  }
}

async function readable(ctx: AgentToolContext, raw: string): Promise<string> {
  const path = await realPathOf(raw, ctx.dirs.work);
  refuseKernelTree(path);
  if (!sandboxPolicyAllows(ctx.policy, 'read', path, platform)) {
    throw new Refusal('deny-read', `${path} is on the deny-read list (credentials, secrets, the daemon's private state), which no task may read; it cannot be requested.`);
  }
  return path;
}

async function writable(ctx: AgentToolContext, raw: string): Promise<string> {
  const path = await realPathOf(raw, ctx.dirs.work);
  refuseKernelTree(path);
  if (!sandboxPolicyAllows(ctx.policy, 'write', path, platform)) {
    const inside = pathIsUnder(path, ctx.dirs.work, platform);
    const why = inside
      ? `${path} is a protected name (a landing such as .git/hooks, a .env or key file) or writes are switched off for this pod`
      : `${path} is outside this task's directory; a pod task writes only inside ${ctx.dirs.work}`;
    throw new Refusal('outside-sandbox', `the write was refused: ${why}. Write the file under ${ctx.dirs.work} instead (a relative path does that).`);
  }
  return path;
}

async function sandboxed(ctx: AgentToolContext, argv: [string, ...string[]], stdin: string | undefined, timeoutMs: number | undefined): Promise<AgentToolOutcome> {
  let run: SandboxRunResult;
  try {
    run = await ctx.sandbox.run({
      argv,
      cwd: ctx.dirs.work,
      env: ctx.env,
      ...(stdin !== undefined ? { stdin } : {}),
      timeoutMs: Math.min(timeoutMs ?? ctx.commandTimeoutMs, ctx.commandTimeoutMs),
      maxOutputBytes: MAX_RUN_OUTPUT,
      policy: ctx.policy,
      signal: ctx.signal,
    });
  } catch (error) {
    const message = error instanceof SandboxUnavailableError ? error.message : `the sandbox failed to start the command: ${(error as Error).message}`;
    return { ok: false, refused: true, rule: 'sandbox-unavailable', message: `${message}. The command did not run.` };
  }
  if (run.writeDenied) {
    const where = run.deniedWrites.length > 0 ? run.deniedWrites.join(', ') : 'a path outside the task directory';
    return {
      ok: false,
      refused: true,
      rule: 'outside-sandbox',
      message: `the sandbox refused a write to ${where}: a pod task writes only inside ${ctx.dirs.work}. Write there instead (relative paths do).${movedAsideText(run.movedAside ?? [])}`,
      run,
    };
  }
  return { ok: true, value: { exitCode: run.exitCode, signal: run.signal, timedOut: run.timedOut }, run };
}

const timeoutMs = z.number().int().positive().optional();
const CodeParams = z.object({ code: z.string().min(1).max(1_000_000), timeoutMs }).strict();
const CommandParams = z.object({ command: z.string().min(1).max(1_000_000), timeoutMs }).strict();

/** Every tool of the agent, by name. Which of them a task gets is the user's list. */
export const AGENT_TOOLS: Readonly<Record<AgentTool['name'], AgentTool>> = {
  read_file: tool(
    'read_file',
    'Read a text file anywhere on this machine (relative paths are taken from your working directory). Returns at most 256 KiB from `offset`.',
    z.object({ path: z.string().min(1), offset: z.number().int().min(0).default(0) }).strict(),
    async (ctx, p) => {
      const path = await readable(ctx, p.path);
      // Non-blocking (a FIFO the task's code planted must not hang the pod), no symlink followed past the check.
      const handle = await openForRead(path).catch((error: unknown) => {
        if (error instanceof SafeFileError && error.code === 'not-a-file') throw new Refusal('not-a-file', `${path} is not a regular file (use list_dir for a directory).`);
        throw error;
      });
      try {
        const buffer = Buffer.alloc(MAX_READ + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, p.offset);
        return { path, content: buffer.subarray(0, Math.min(bytesRead, MAX_READ)).toString('utf8'), truncated: bytesRead > MAX_READ };
      } finally {
        await handle.close();
      }
    },
  ),
  list_dir: tool(
    'list_dir',
    'List a directory anywhere on this machine. An entry whose name is not UTF-8 carries notUtf8 (its bytes as \\xNN); its name is shown with U+FFFD and names no file.',
    z.object({ path: z.string().min(1).default('.') }).strict(),
    async (ctx, p) => {
      const path = await readable(ctx, p.path);
      // by descriptor, never through a symlink swapped in after the check, never a kernel file
      // system wherever it is mounted (found by an attack: a bound /proc listed the daemon's fds)
      const entries = await listDirNoFollow(path);
      // A name that is not UTF-8 has no exact text: shown with U+FFFD and marked with its bytes.
      return {
        path,
        entries: entries.slice(0, 2000).map((e) => {
          const kind = e.isDirectory() ? 'dir' : e.isSymbolicLink() ? 'symlink' : 'file';
          const name = utf8NameOf(e.name);
          return name !== undefined ? { name, kind } : { name: e.name.toString('utf8'), kind, notUtf8: shownBytes(e.name) };
        }),
      };
    },
  ),
  write_file: tool(
    'write_file',
    'Write a whole text file inside your working directory (the only place you can write).',
    z.object({ path: z.string().min(1), content: z.string() }).strict(),
    async (ctx, p) => {
      const path = await writable(ctx, p.path);
      await writeFileAtomic(path, p.content, { createParents: true, journal: ctx.journal });
      return { path, bytes: Buffer.byteLength(p.content) };
    },
  ),
  copy_into_sandbox: tool(
    'copy_into_sandbox',
    'Copy a file or directory from anywhere (read-only) into your working directory. `to` is relative to it (default: the source name).',
    z.object({ from: z.string().min(1), to: z.string().min(1).optional() }).strict(),
    async (ctx, p) => {
      const from = await readable(ctx, p.from);
      const to = await writable(ctx, p.to ?? basename(from));
      const copied = await copyTree(ctx, from, to, { bytes: 0, files: 0, skipped: [] as string[] });
      return { from, to, files: copied.files, bytes: copied.bytes, skipped: copied.skipped };
    },
  ),
  run_python: tool('run_python', 'Run Python 3 code in the sandbox, in your working directory. Returns exit code, stdout and stderr.', CodeParams, (ctx, p) =>
    sandboxed(ctx, ['python3', '-'], p.code, p.timeoutMs),
  ),
  run_node: tool('run_node', 'Run Node.js code in the sandbox, in your working directory. Returns exit code, stdout and stderr.', CodeParams, (ctx, p) =>
    sandboxed(ctx, ['node', '-'], p.code, p.timeoutMs),
  ),
  run_shell: tool('run_shell', 'Run a shell command (/bin/sh -c) in the sandbox, in your working directory.', CommandParams, (ctx, p) =>
    sandboxed(ctx, ['/bin/sh', '-c', p.command], undefined, p.timeoutMs),
  ),
  finish: tool(
    'finish',
    'End the task: your conclusion (the answer), a one-line summary, and whether it succeeded.',
    z.object({ conclusion: z.string().min(1), summary: z.string().min(1).optional(), success: z.boolean().default(true) }).strict(),
    async (_ctx, p) => p,
  ),
};

/**
 * Copies into the work directory through core's safe file layer: the source tree is walked by
 * descriptors (core `walkTreeNoFollow`), so a directory swapped for a symlink mid-copy is never
 * entered (found by an attack: the walk by path listed a deny-read folder swapped in), and each
 * file is copied from what the walk opened; a name the task's code made a symlink in the work
 * directory is refused, never followed; directories are made only inside verified parents; each
 * file lands atomically.
 */
async function copyTree(ctx: AgentToolContext, from: string, to: string, acc: { bytes: number; files: number; skipped: string[] }) {
  const stat = await lstat(from);
  if (stat.isSymbolicLink()) {
    acc.skipped.push(`${from} (symlink)`);
    return acc;
  }
  if (!stat.isDirectory()) {
    if (!stat.isFile()) {
      acc.skipped.push(`${from} (not a regular file)`);
      return acc;
    }
    if (stat.size > MAX_COPY_BYTES) throw tooLarge();
    acc.bytes += await copyFileAtomic(from, to, { createParents: true, journal: ctx.journal, maxBytes: MAX_COPY_BYTES });
    acc.files++;
    return acc;
  }
  await makeDirs(to, { mode: 0o755 });
  const fromBytes = Buffer.from(from, 'utf8');
  await walkTreeNoFollow(from, async (entry) => {
    const name = utf8NameOf(entry.name);
    const source = entry.path.toString('utf8');
    if (name === undefined) {
      acc.skipped.push(`${join(source, '..')}/${shownBytes(entry.name)} (its name is not UTF-8)`);
      return 'skip';
    }
    // each name the walk reaches is judged as a name the task gave would be (found by an attack:
    // a copy from / walked into whatever came before its first refused name, /proc included)
    if (isKernelTree(source)) {
      acc.skipped.push(`${source} (kernel-tree: the daemon's own /proc and the host's /sys are no task's)`);
      return 'skip';
    }
    if (!sandboxPolicyAllows(ctx.policy, 'read', source, platform)) {
      acc.skipped.push(`${source} (deny-read)`);
      return 'skip';
    }
    if (entry.kind === 'symlink') {
      acc.skipped.push(`${source} (symlink)`);
      return 'skip';
    }
    if (entry.kind === 'other') {
      acc.skipped.push(`${source} (not a regular file)`);
      return 'skip';
    }
    const target = await writable(ctx, join(to, entry.path.subarray(fromBytes.length + 1).toString('utf8')));
    if (entry.kind === 'dir') {
      await makeDirs(target, { mode: 0o755 });
      return 'enter';
    }
    const input = await openWalkedFile(entry);
    try {
      if (acc.bytes + (await input.stat()).size > MAX_COPY_BYTES) throw tooLarge();
      acc.bytes += await copyFileAtomic({ handle: input, shown: source }, target, { createParents: true, journal: ctx.journal, maxBytes: MAX_COPY_BYTES - acc.bytes });
    } finally {
      await input.close();
    }
    acc.files++;
    return 'skip';
  });
  return acc;
}

function tooLarge(): Refusal {
  return new Refusal('copy-too-large', `copying more than ${MAX_COPY_BYTES} bytes into the sandbox is refused; copy less.`);
}

/** The tools offered to the model for a task, as JSON Schema. */
export function modelToolsOf(names: readonly AgentTool['name'][]): ModelTool[] {
  return names.map((name) => {
    const t = AGENT_TOOLS[name];
    const schema = z.toJSONSchema(t.params, { io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name, description: t.description, parameters: schema };
  });
}

/** A path relative to the work directory, for display. */
export function shown(dirs: TaskDirs, path: string): string {
  const rel = relative(dirs.work, path);
  return rel.startsWith('..') ? path : rel || '.';
}

// what the sandbox took away, in the refusal the agent reads (the entries, not stderr text)
function movedAsideText(entries: readonly MovedAside[]): string {
  if (entries.length === 0) return '';
  return ` The sandbox took away what the command wrote there: ${entries.map((e) => `${e.path} (${e.reason}${e.to === undefined ? '' : `, now at ${e.to}`})`).join(', ')}.`;
}
