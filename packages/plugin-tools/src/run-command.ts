import { type KeptCommit, type MovedAside, type ReachCredential, type SandboxPolicy, type SandboxRunResult, type SandboxService, SandboxUnavailableError, StdinStream } from '@aalis/api-reach';
import { defineTool, type ToolCallContext, ToolError } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { z } from 'zod';
import { BackgroundJobs, type JobInput } from './background-jobs.js';
import { credentialOf, requireOrThrow } from './credential.js';
import { toolPathOf } from './tool-path.js';
import { type CommandRunResult, runUnsandboxed } from './unsandboxed-run.js';
import { commandPolicyOf, MAX_OUTPUT, sandboxRequestOf } from './sandbox-request.js';
import { grantRefusedWrites, type RefusedWrite, withMovedAside } from './write-retry.js';

/** Parameters of `run_command`: a shell string (run with `/bin/sh -c`) or an argv. */
export const RunCommandParams = z
  .object({
    command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
    cwd: z.string().min(1).optional(),
    stdin: z.string().optional(),
    timeoutMs: z.number().int().positive().max(30 * 60_000).default(120_000),
    /** `off` takes the network away even where the tier has it; `on` asks for it where the tier has none. */
    network: z.enum(['on', 'off']).optional(),
  })
  .strict();

/** Parameters of `run_command_background`: those of `run_command`, and `interactive` to keep its stdin open for `command_input`. */
export const RunCommandBackgroundParams = RunCommandParams.extend({
  /** Keep the command's stdin open (after `stdin`, when given) for `command_input`; without it the command reads `stdin` or nothing, then EOF. */
  interactive: z.boolean().optional(),
}).strict();

/** Parameters of `command_input`: text to write to a background command's stdin, `eof` to end it; at least one. */
export const CommandInputParams = z
  .object({
    jobId: z.string().uuid(),
    /** Written as UTF-8, as it is: a line needs its own "\n". */
    text: z.string().optional(),
    /** After the text: end the command's input (EOF), as Ctrl-D at a terminal. */
    eof: z.boolean().optional(),
  })
  .strict()
  .refine((p) => (p.text !== undefined && p.text !== '') || p.eof === true, 'give text to write, eof: true, or both');

/** The command ran, was refused a write, and the write was not approved: nothing more ran. */
export class CommandRefusedError extends ToolError {
  constructor(
    message: string,
    /** The refused (read-only-first) run. */
    readonly result: SandboxRunResult,
  ) {
    super('denied', message);
  }
}

/** What `run_command` returns: the final run only (the read-only-first attempt is not shown). */
export type RunCommandResult = CommandRunResult & {
  readonly where: 'sandbox' | 'host';
  /** How many times the command ran: 2 only when refused writes were granted and the backend could not keep them, so it was retried. */
  readonly runs: 1 | 2;
  /** Paths approved after the first run was refused them: committed from where the sandbox kept them, or (runs 2) the command retried once with them. */
  readonly grantedWrites: readonly string[];
  /** Writes the sandbox refused and undid in the run returned, each with why it stays refused. */
  readonly refusedWrites: readonly RefusedWrite[];
  /**
   * Entries the command wrote that the sandbox removed or moved aside in the run returned (where
   * each is now, when kept), as data for the agent; the command's stderr stays its own.
   */
  readonly movedAside: readonly MovedAside[];
  /** Present when writes were refused: what happened, in words, for the agent. */
  readonly note?: string;
};

/** Where run_command finds the sandbox backend. */
export interface RunDeps {
  sandbox(): SandboxService | undefined;
}


async function sandboxed(service: SandboxService, request: Parameters<SandboxService['run']>[0]): Promise<SandboxRunResult> {
  try {
    return await service.run(request);
  } catch (error) {
    if (error instanceof SandboxUnavailableError) throw new ToolError('unavailable', `${error.message}. The command did not run.`);
    throw new ToolError('unavailable', `the ${service.backend} sandbox failed to start the command, so it did not run: ${(error as Error).message}`);
  }
}

/**
 * Runs one command under the call's credential. On the host for confirm and full (after the
 * exec ask, which names the command and its cwd); in the sandbox otherwise, read-only first:
 * when the sandbox refused writes, each refused path is asked for exactly (see {@link grantRefusedWrites}),
 * and the command is retried once only when every grant makes its refused write one the new
 * policy lets the sandbox make. A refusal that cannot be asked for, or that a grant would not
 * change, is returned as the command's result (`refusedWrites`, `note`): it never re-runs.
 */
export async function runCommand(ctx: ToolCallContext, params: z.output<typeof RunCommandParams>, deps: RunDeps, live?: StdinStream): Promise<RunCommandResult> {
  const credential: ReachCredential = credentialOf(ctx);
  const { argv, cwd } = await commandOf(params, credential);
  const command = { argv, cwd, ...(params.stdin !== undefined ? { stdin: params.stdin } : {}) };
  await requireOrThrow(credential, { effect: 'exec', host: credential.exec === 'host', command });
  await requireOrThrow(credential, { effect: 'read', path: cwd });
  // a live stdin (a background command's, written by command_input) starts with `stdin`, which its handler wrote to it
  const stdin = live ?? params.stdin;
  const common = { argv, cwd, timeoutMs: params.timeoutMs, maxOutputBytes: MAX_OUTPUT, ...(stdin !== undefined ? { stdin } : {}) };

  if (credential.exec === 'host') {
    const result = await runUnsandboxed({ ...common, env: await credential.processEnv('host'), signal: ctx.signal });
    return { where: 'host', ...result, runs: 1, grantedWrites: [], refusedWrites: [], movedAside: [] };
  }
  const service = deps.sandbox();
  if (!service) {
    throw new ToolError('unavailable', 'no sandbox backend is running here, and this tier runs commands only in the sandbox; the command did not run. Run `aalis doctor` to see what is missing.');
  }
  if (params.network === 'on') await requireOrThrow(credential, { effect: 'network', via: 'command' });
  // The one request builder `aalis policy` plans with too: what it prints is this first run.
  const request = await sandboxRequestOf(credential, service, { argv, cwd, timeoutMs: params.timeoutMs, ...(stdin !== undefined ? { stdin } : {}), ...(params.network ? { network: params.network } : {}) });
  const policyNow = (): SandboxPolicy => commandPolicyOf(credential, params.network);
  const { keepRefused: _first, ...again } = request;
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  const run = (policy: SandboxPolicy) => sandboxed(service, { ...again, policy, ...signal });
  const firstPolicy = request.policy;
  const first = await sandboxed(service, { ...request, ...signal });
  const kept = first.keptWrites;
  try {
    if (!first.writeDenied) return { where: 'sandbox', ...pick(first), runs: 1, grantedWrites: [], refusedWrites: [] };

    const tail = first.stderr.trim().split('\n').slice(-5).join('\n');
    const onceOnly = (refusedWrites: readonly RefusedWrite[], why: string): RunCommandResult => ({
      where: 'sandbox',
      ...pick(first),
      runs: 1,
      grantedWrites: [],
      refusedWrites,
      note: `${why} The command ran once, without ${refusedWrites.length === 1 ? 'that write' : 'those writes'} (undone); everything else it did stays. It was not run again.`,
    });
    if (ctx.signal?.aborted) return onceOnly([], 'The call was cancelled, so its refused writes were not asked for.');
    if (first.deniedWrites.length === 0) {
      return onceOnly([], 'The sandbox refused a write but could not tell which path, so there was nothing precise to ask for.');
    }
    const plan = await grantRefusedWrites({ deniedWrites: first.deniedWrites, movedAside: first.movedAside ?? [], cwd, policy: firstPolicy, policyNow, credential, platform: process.platform });
    if (plan.kind === 'once') return onceOnly(plan.refusals, plan.why);
    if (plan.kind === 'not-approved') {
      throw new CommandRefusedError(
        `the command needed to write ${plan.path}: ${plan.message} The command ran once without that write (undone); everything else it did stays, and it was not run again. Output of that run:\n${tail}`,
        first,
      );
    }
    const { refused, granted } = plan;
    if (kept && refused.every((p) => kept.paths.includes(p))) return await commitKept(service, first, kept.id, policyNow(), refused, granted);
    if (live) {
      // what it read cannot be read again: a command fed live input is never re-run for a grant
      const why = `The command was fed live input (command_input), so it cannot be run again to make the approved ${refused.length === 1 ? 'write' : 'writes'}, and the sandbox did not keep ${refused.length === 1 ? 'it' : 'them'}; ${refused.length === 1 ? 'it is' : 'they are'} not on the host.`;
      return { where: 'sandbox', ...pick(first), runs: 1, grantedWrites: [], refusedWrites: refused.map((path) => ({ path, rule: 'live-input', message: `${path}: ${why}` })), note: `${why} The command ran once and was not run again; everything else it did stays.` };
    }
    const second = await run(policyNow());
    const again = second.writeDenied ? withMovedAside(await refusedAgain(second, cwd), second.movedAside ?? []) : [];
    return {
      where: 'sandbox',
      ...pick(second),
      runs: 2,
      grantedWrites: granted,
      refusedWrites: again,
      ...(second.writeDenied
        ? { note: `The command ran twice: once refused ${refused.join(', ')}, then again with ${granted.join(', ')} approved, and the second run was refused ${again.length > 0 ? again.map((r) => r.path).join(', ') : 'a write it could not name'}. It is not retried again; ask for those writes another way.` }
        : {}),
    };
  } finally {
    // whatever came of the ask, nothing stays kept past this call
    if (kept) await service.discardKept?.(kept.id).catch(() => {});
  }
}

/**
 * The approved writes committed from where the sandbox kept them, without running the command
 * again: what it wrote is what lands, judged again under the policy with the grants.
 */
async function commitKept(service: SandboxService, first: SandboxRunResult, id: string, policy: SandboxPolicy, refused: readonly string[], granted: readonly string[]): Promise<RunCommandResult> {
  let done: KeptCommit;
  try {
    done = await service.commitKept!(id, policy, refused);
  } catch (error) {
    const why = `The approved writes could not be committed (${(error as Error).message}); they are not on the host.`;
    return { where: 'sandbox', ...pick(first), runs: 1, grantedWrites: granted, refusedWrites: refused.map((path) => ({ path, rule: 'not-committed', message: why })), note: `${why} The command ran once and was not run again.` };
  }
  const left: RefusedWrite[] = [
    ...done.refused.map((path) => ({ path, rule: 'refused-again' as const, message: `${path} was still refused when the approved writes were committed; it is not on the host.` })),
    ...done.conflicts.map((path) => ({ path, rule: 'conflict' as const, message: `${path} changed on the host since the command started; the host's version was kept and the command's was not committed.` })),
  ];
  const landed = new Set(done.committed);
  return {
    where: 'sandbox',
    ...pick(first),
    // what was committed now is on the host: no longer kept off it
    movedAside: (first.movedAside ?? []).filter((entry) => !landed.has(entry.path)),
    stderr: first.stderr + done.notes,
    runs: 1,
    grantedWrites: granted,
    refusedWrites: left,
    ...(left.length > 0 ? { note: `The command ran once; of the writes approved afterwards, ${left.map((r) => r.path).join(', ')} did not land (see refusedWrites). It was not run again.` } : {}),
  };
}

/** The argv (a shell string is `/bin/sh -c` it) and the real cwd of a command's params. */
async function commandOf(params: z.output<typeof RunCommandParams>, credential: ReachCredential): Promise<{ argv: [string, ...string[]]; cwd: string }> {
  const argv: [string, ...string[]] = typeof params.command === 'string' ? ['/bin/sh', '-c', params.command] : (params.command as [string, ...string[]]);
  return { argv, cwd: await toolPathOf(params.cwd ?? credential.home ?? process.cwd(), credential.home ?? process.cwd(), 'cwd') };
}

/**
 * A background command's live stdin: `stdin` (when given) queued first, each later write judged
 * as the command started with that input would be, under the writer's credential now.
 */
function liveInputOf(params: z.output<typeof RunCommandBackgroundParams>): JobInput {
  const stream = new StdinStream();
  if (params.stdin !== undefined) stream.write(params.stdin);
  return {
    stream,
    judge: async (ctx, text) => {
      const credential = credentialOf(ctx);
      const { argv, cwd } = await commandOf(params, credential);
      await requireOrThrow(credential, { effect: 'exec', host: credential.exec === 'host', command: { argv, cwd, stdin: text } });
    },
  };
}

async function refusedAgain(result: SandboxRunResult, cwd: string): Promise<RefusedWrite[]> {
  const paths = [...new Set(await Promise.all(result.deniedWrites.map((p) => realPathOf(p, cwd).catch(() => p))))];
  return paths.map((path) => ({ path, rule: 'refused-again', message: `the retry was refused writing ${path} too; it was undone.` }));
}

function pick(result: SandboxRunResult): CommandRunResult & { readonly movedAside: readonly MovedAside[] } {
  const { stdout, stderr, exitCode, signal, timedOut, truncated } = result;
  return { stdout, stderr, exitCode, signal, timedOut, truncated, movedAside: result.movedAside ?? [] };
}

/** The shell tools: `run_command`, and a background variant with `command_input`, `command_status` and `command_kill`; `jobs` holds the background commands. */
export function commandTools(deps: RunDeps, jobs: BackgroundJobs<RunCommandResult> = new BackgroundJobs()) {
  const run = defineTool({
    name: 'run_command',
    description: 'Run a shell command (a string for /bin/sh -c, or an argv) in the main directory, under this tier.',
    params: RunCommandParams,
    risk: 'medium',
    summarize: (p) => (typeof p.command === 'string' ? p.command : p.command.join(' ')),
    handler: (ctx, params) => runCommand(ctx, params, deps),
  });
  const background = defineTool({
    name: 'run_command_background',
    description:
      'Start run_command in the background; poll it with command_status, stop it with command_kill. With interactive: true its stdin stays open (after stdin, when given) for command_input, to answer a prompt or drive a REPL. It keeps the policy it started with, and is closed (output kept, the reason in its status) if the tier moves between the sandbox and the host or the main directory changes.',
    params: RunCommandBackgroundParams,
    risk: 'medium',
    summarize: (p) => (typeof p.command === 'string' ? p.command : p.command.join(' ')),
    handler: (ctx, params) => {
      const { interactive, ...run } = params;
      const input = interactive ? liveInputOf(params) : undefined;
      return jobs.start(ctx, (jobCtx) => runCommand(jobCtx, run, deps, input?.stream), input);
    },
  });
  const input = defineTool({
    name: 'command_input',
    description:
      "Write text to the stdin of a background command you started with interactive: true (a line needs its own \\n), and with eof: true end its input (EOF, as Ctrl-D). Each write is judged as the command with that input would be (asked where that asks). Answers the bytes written and those it has not read yet; a command that does not read refuses writes past 1 MiB unread. The output shows in command_status when it ends. A command fed input is never run again: a write the sandbox refused it is committed from where the sandbox kept it once approved, or stays refused (refusedWrites, rule live-input).",
    params: CommandInputParams,
    risk: 'medium',
    summarize: (p) => `${p.text ?? ''}${p.eof ? ' <EOF>' : ''}`,
    handler: (ctx, params) => jobs.input(ctx, params.jobId, params),
  });
  const status = defineTool({
    name: 'command_status',
    description: 'The state of a background command, and its result when done (with why, if it was closed).',
    params: z.object({ jobId: z.string().uuid() }).strict(),
    risk: 'low',
    handler: (ctx, params) => jobs.status(ctx, params.jobId),
  });
  const kill = defineTool({
    name: 'command_kill',
    description: 'Stop a background command you started (its whole process tree); answers its final status, output so far included.',
    params: z.object({ jobId: z.string().uuid() }).strict(),
    risk: 'low',
    handler: (ctx, params) => jobs.kill(ctx, params.jobId),
  });
  return [run, background, input, status, kill] as const;
}
