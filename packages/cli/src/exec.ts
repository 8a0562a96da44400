import { constants } from 'node:os';
import { reach, SandboxUnavailableError, sandbox } from '@aalis/api-reach';
import { ToolError } from '@aalis/core';
import { CommandRefusedError, runCommand } from '@aalis/plugin-tools';
import { parse } from './args.js';
import { BACKEND_CHOICES, type BackendChoice, boundaryOf, resolveBackend, TIER_CHOICES, tierOf } from './choices.js';
import { chooseDataDir } from './data-dir.js';
import { markPhase } from './exec-phases.js';
import { NotUtf8PathError, refuseLossyArgs } from './lossy-inputs.js';
import { forTerminal } from './terminal-text.js';
import { type CliIo, UsageError } from './io.js';
import { type LocalOptions, startLocal } from './runtime.js';
import { MissingParentError, NotOwnDirError } from './own-dir.js';
import { directory } from './directory-option.js';

/** The exit status when the sandbox cannot start: nothing ran. */
export const EXIT_SANDBOX_UNAVAILABLE = 125;
/** The exit status when a command was refused before it ran (no local effect, exec denied). */
export const EXIT_REFUSED = 126;
/** The exit status of a command killed by `--timeout`. */
export const EXIT_TIMEOUT = 124;

export const EXEC_HELP = `aalis exec: run one command under an owner's reach, in the platform sandbox

Usage: aalis exec [options] -- CMD [ARG...]

The command runs as if the owner asked for it in a conversation whose main directory is the
current directory (or --cwd). Writes outside the reach are asked at this terminal: approve once,
remember for this session, or reject. In the sandboxed tiers the command runs read-only first:
when the sandbox refuses a write, exactly the refused paths are asked for and, on a yes, the
command runs once more with them. With no terminal every ask is a rejection.

Options:
  --tier TIER          ${TIER_CHOICES.join(' | ')}  (default workspace)
                       readonly and workspace run in the sandbox; confirm and full on the host
  --boundary POLICY    ask | deny: what an out-of-range write becomes (default ask)
  --network on|off     off takes the network away; on asks for it where the tier has none
  --allow-write PATH   an extra writable root (repeatable)
  --cwd DIR            the main directory (default the current directory)
  --backend NAME       ${BACKEND_CHOICES.join(' | ')}  (default auto: the platform's)
  --timeout SECONDS    kill the command after this long (default 600)
  --stdin              pass this process's standard input to the command
  --data DIR           the data directory (default $AALIS_DATA, else data/ beside the nearest
                       aalis.config.json, else ~/.local/share/aalis)
  -h, --help           this help

A run that finds no exec helper starts one as it ends: a process of yours that runs the next
commands for aalis exec (same directory, environment, umask, questions and signals) with the
sandbox already set up, and ends after 5 minutes unused. AALIS_EXEC_HELPER=off: no helper.

Exit status: the command's own; ${EXIT_TIMEOUT} on timeout; ${EXIT_REFUSED} when the reach refused it
before it ran; ${EXIT_SANDBOX_UNAVAILABLE} when the sandbox cannot start (the reason and the fix are
printed), so nothing ever runs unsandboxed by accident. SIGINT or SIGTERM while the command
runs kills it and removes its sandbox (a docker container too), then exits 130 or 143; a second
one exits at once.

Examples:
  aalis exec -- make test
  aalis exec --tier readonly -- git status
  aalis exec --allow-write ~/.cache/mytool -- ./build.sh
`;

const FLAGS = {
  tier: { type: 'string', choices: TIER_CHOICES },
  boundary: { type: 'string', choices: ['ask', 'deny'] },
  network: { type: 'string', choices: ['on', 'off'] },
  'allow-write': { type: 'string', multiple: true },
  cwd: { type: 'string' },
  backend: { type: 'string', choices: BACKEND_CHOICES },
  timeout: { type: 'string' },
  stdin: { type: 'boolean' },
  data: { type: 'string' },
} as const;


/** What the process running `aalis exec` lends it (the exec helper, exec-server.ts: its sandbox services). */
export interface ExecHost {
  /** See {@link LocalOptions.sandboxService}. */
  readonly sandboxService?: LocalOptions['sandboxService'];
  /** See {@link LocalOptions.keptSessions}. */
  readonly keptSessions?: LocalOptions['keptSessions'];
}

/** `aalis exec`. */
export async function execCommand(argv: readonly string[], io: CliIo, host: ExecHost = {}): Promise<number> {
  const { flags, positionals, rest } = parse('exec', argv, FLAGS);
  if (flags.help) {
    io.stdout(EXEC_HELP);
    return 0;
  }
  const command = [...positionals, ...rest];
  if (command.length === 0) throw new UsageError('no command given; put it after --, e.g. aalis exec -- ls -la', 'exec');
  refuseLossyArgs(command);
  const tier = tierOf(flags.tier, 'exec');
  const timeout = flags.timeout === undefined ? 600 : Number(flags.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError(`--timeout '${String(flags.timeout)}' is not a positive number of seconds.`, 'exec');
  const cwd = typeof flags.cwd === 'string' ? directory(flags.cwd, '--cwd', true) : directory(process.cwd(), 'the command\'s directory', false);
  const allowWrite = ((flags['allow-write'] as string[] | undefined) ?? []).map((p) => directory(p, '--allow-write', true));
  const backend = resolveBackend((flags.backend as BackendChoice | undefined) ?? 'auto');
  const stdin = flags.stdin ? await io.readStdin?.() : undefined;

  let runtime: Awaited<ReturnType<typeof startLocal>>;
  try {
    const sandboxed = tier !== 'confirm' && tier !== 'full';
    runtime = await startLocal({ tier, boundary: boundaryOf(flags.boundary), cwd, allowWrite, backend, data: chooseDataDir({ data: flags.data as string | undefined }), io, warmSandbox: sandboxed, ...(flags.network ? { network: flags.network as 'on' | 'off' } : {}), ...(host.sandboxService ? { sandboxService: host.sandboxService } : {}), ...(host.keptSessions ? { keptSessions: host.keptSessions } : {}) });
  } catch (error) {
    // not the sandbox's: a data directory to refuse, or one named in bytes that are not UTF-8, says so with its own fix
    if (error instanceof NotOwnDirError || error instanceof MissingParentError || error instanceof NotUtf8PathError) throw error;
    return unavailable(io, error);
  }
  markPhase('runtime');
  try {
    const service = runtime.kernel.maybe(sandbox);
    if (service && tier !== 'confirm' && tier !== 'full') {
      const probe = await service.probe();
      if (!probe.available) {
        const failed = probe.checks.filter((c) => !c.ok);
        io.stderr(forTerminal(`aalis: the ${backend} sandbox cannot start here, so the command did not run:\n${failed.map((c) => `  - ${c.name}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`).join('\n')}\n`));
        return EXIT_SANDBOX_UNAVAILABLE;
      }
    }
    markPhase('probed');
    const credential = await runtime.kernel.get(reach).forCall(runtime.turn);
    const controller = new AbortController();
    const interrupt = abortOnSignal(controller, io);
    let result: Awaited<ReturnType<typeof runCommand>>;
    try {
      result = await runCommand(
        { turn: runtime.turn, callId: runtime.turn.inbound.id, tool: 'run_command', signal: controller.signal, credential },
        { command, timeoutMs: Math.round(timeout * 1000), ...(flags.network ? { network: flags.network as 'on' | 'off' } : {}), ...(stdin !== undefined ? { stdin } : {}) },
        { sandbox: () => service },
      );
    } finally {
      interrupt.off();
    }
    markPhase('ran');
    const received = interrupt.received();
    if (received !== undefined) {
      io.stdout(result.stdout);
      io.stderr(result.stderr);
      io.stderr(`aalis: ${received} received; the command was killed and its sandbox removed.\n`);
      return exitStatus(null, received);
    }
    io.stdout(result.stdout);
    io.stderr(result.stderr);
    if (result.truncated) io.stderr('aalis: output was cut at 1 MiB per stream.\n');
    // Writes refused (and undone) that no grant could lift: said, and never a success.
    if (result.note !== undefined) io.stderr(`aalis: ${forTerminal(result.note)}\n`);
    if (result.timedOut) {
      io.stderr(`aalis: the command ran past --timeout ${timeout}s and was killed.\n`);
      return EXIT_TIMEOUT;
    }
    const status = exitStatus(result.exitCode, result.signal);
    return result.note !== undefined ? status || 1 : status;
  } catch (error) {
    if (error instanceof CommandRefusedError) {
      io.stdout(error.result.stdout);
      io.stderr(error.result.stderr);
      io.stderr(`aalis: ${forTerminal(error.message.split(' Output')[0] ?? '')}\n`);
      return exitStatus(error.result.exitCode, error.result.signal) || 1;
    }
    if (error instanceof ToolError && error.kind === 'unavailable') return unavailable(io, error);
    if (error instanceof ToolError) {
      io.stderr(`aalis: ${forTerminal(error.message)}\n`);
      return EXIT_REFUSED;
    }
    throw error;
  } finally {
    await runtime.stop();
    markPhase('stopped');
  }
}

/**
 * SIGINT and SIGTERM while the command runs abort it: the sandbox kills it and removes what it
 * made (a docker backend's container: the process dying at the signal's default action left it
 * running until its own deadline) before exec exits with 128 + the signal's number. A second
 * signal exits at once. SIGHUP is left at its default (nohup's ignore stays). Run by the exec
 * helper, the signals are its client's (`io.onInterrupt`), and a second one ends the client, not
 * the helper: the abort under way goes on.
 */
function abortOnSignal(controller: AbortController, io: CliIo): { readonly received: () => NodeJS.Signals | undefined; readonly off: () => void } {
  let received: NodeJS.Signals | undefined;
  if (io.onInterrupt) {
    const off = io.onInterrupt((signal) => {
      if (received !== undefined) return;
      received = signal;
      controller.abort(new Error(`aalis exec received ${signal}`));
    });
    return { received: () => received, off };
  }
  const onSignal = (signal: NodeJS.Signals) => {
    if (received !== undefined) {
      io.stderr(`aalis: ${signal} received again; exiting without waiting for the sandbox to be removed\n`);
      process.exit(exitStatus(null, signal));
    }
    received = signal;
    controller.abort(new Error(`aalis exec received ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    received: () => received,
    off: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

function unavailable(io: CliIo, error: unknown): number {
  const message = error instanceof SandboxUnavailableError || error instanceof Error ? error.message : String(error);
  io.stderr(`aalis: the sandbox cannot start, so the command did not run: ${forTerminal(message)}\n  Run 'aalis doctor' to see what works on this machine.\n`);
  return EXIT_SANDBOX_UNAVAILABLE;
}

function exitStatus(code: number | null, signal: string | null): number {
  if (code !== null) return code;
  const number = signal ? (constants.signals as Record<string, number>)[signal] : undefined;
  return number === undefined ? 1 : 128 + number;
}
