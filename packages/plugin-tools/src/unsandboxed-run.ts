import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { BoundedOutput, feedStdin, type SandboxRunResult, type SandboxStdin } from '@aalis/api-reach';
import { ToolError } from '@aalis/core';

/** What a command produced, sandboxed or not: a sandbox result without the sandbox's own findings. */
export type CommandRunResult = Omit<SandboxRunResult, 'writeDenied' | 'deniedWrites'>;

/** Why a program could not be started, said plainly: it did not run. */
function startFailure(file: string, cwd: string, error: NodeJS.ErrnoException): ToolError {
  const why =
    error.code === 'ENOENT'
      ? existsSync(cwd)
        ? `'${file}' was not found (not on the PATH of the owner's login environment, or no such file)`
        : `its directory ${cwd} does not exist (any more)`
      : error.code === 'EACCES'
        ? `'${file}' is not executable, or ${cwd} cannot be entered`
        : `${error.code ?? 'error'}: ${error.message}`;
  return new ToolError('failed', `the command could not be started on the host: ${why}. It did not run.`);
}

/**
 * Runs a command unsandboxed, on the host (the confirm and full tiers only; see the glossary in
 * docs/architecture.md), in its own process group, so a
 * timeout kills the whole tree; the environment is exactly the one given. A program that cannot
 * be started rejects with a `failed` {@link ToolError} saying why (not found, not executable).
 */
export function runUnsandboxed(options: {
  argv: readonly [string, ...string[]];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Given whole, or live (api-reach's `feedStdin` writes it as the command reads). */
  stdin?: SandboxStdin;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Aborting kills the whole tree, as a timeout does. */
  signal?: AbortSignal;
}): Promise<CommandRunResult> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = options.argv;
    const child = spawn(file, args, { cwd: options.cwd, env: { ...options.env }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new BoundedOutput(options.maxOutputBytes);
    const err = new BoundedOutput(options.maxOutputBytes);
    out.attach(child.stdout);
    err.attach(child.stderr);
    let timedOut = false;
    const killTree = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killTree();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', killTree, { once: true });
    if (options.signal?.aborted) killTree();
    child.once('error', (error) => {
      clearTimeout(timer);
      feed.stop();
      reject(startFailure(file, options.cwd, error as NodeJS.ErrnoException));
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      feed.stop();
      options.signal?.removeEventListener('abort', killTree);
      killTree();
      resolve({ stdout: out.text(), stderr: err.text(), exitCode, signal, timedOut, truncated: out.truncated || err.truncated });
    });
    child.stdin.on('error', () => {});
    const feed = feedStdin(options.stdin ?? '', child.stdin);
  });
}
