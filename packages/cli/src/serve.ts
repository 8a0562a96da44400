import { DEPLOYMENTS, type Deployment, errorText } from '@aalis/core';
import { parse } from './args.js';
import { dirname, resolve } from 'node:path';
import { ConfigError, type LoadedConfig, loadConfig } from './daemon/config.js';
import { locatePlugin } from './daemon/plugins.js';
import { deploymentDirOf } from './data-dir.js';
import { type RunningDaemon, startDaemon } from './daemon/daemon.js';
import { type CliIo, UsageError } from './io.js';

export const SERVE_HELP = `aalis serve: run the daemon (the HTTP API for chat adapters and the web console)

Usage: aalis serve [--dir DEPLOYMENT_DIR] [--data DIR] [--port N] [--host ADDR]
                   [--deployment host|docker] [--config FILE]

Starts the kernel with the reach stack (sessions, authority, approval, reach, the tools, the
sandbox backend, the model and the agent that answers messages with it, the AI reviewer, and the
Isolation Pod when it is installed), then serves:
  - the API under /api/ for chat-platform adapters: submit turns and tool calls, receive events
    (Server-Sent Events), answer approvals by code, grants, conversation settings, the audit log;
  - the web console at /console, on the loopback only: a chat pane to talk to the agent, the
    approval inbox, remembered grants, each conversation's four settings, the audit log.
The agent needs a model: the config's "model" (below). Without one, every message is answered
with a model-not-configured error. Chat from a terminal with 'aalis chat'.
Every API call needs 'Authorization: Bearer <token>'. The token is written to <data>/daemon/token
(mode 0600), never printed, and is new at every start unless AALIS_TOKEN (at least 32 characters)
sets it. The console's address printed at start holds a one-time code instead (when stdout is a
terminal: a log would keep it): it opens the console once, within 30 minutes; 'aalis console'
prints a new one.

Options:
  --dir DIR            the deployment directory: the config file aalis.config.json is read
                       there, and data/ is kept there (default: the nearest of the current
                       directory and its ancestors holding aalis.config.json)
  --data DIR           the data directory (default $AALIS_DATA, else DIR/data, else
                       ~/.local/share/aalis): the same rule as every aalis command's
  --port N             the port (default the config's server.port, else 8787; 0 picks a free one)
  --host ADDR          the address to listen on (default 127.0.0.1). The console answers only
                       requests from the loopback whatever this is
  --deployment MODE    ${DEPLOYMENTS.join(' | ')}: where commands run, fixed until the daemon stops
                       (default AALIS_DEPLOYMENT, else the config's deployment, else host)
  --config FILE        read this config file instead of DIR/aalis.config.json
  -h, --help           this help

The config file (JSON; every key optional, unknown keys are errors):
  { "owners": { "qq": ["12345"] },            owner identities per chat platform
    "deployment": "host",                     host | docker
    "approval": { "timeoutMs": 300000 },      how long an ask waits; codeLength
    "server": { "port": 8787, "host": "127.0.0.1" },
    "sandbox": { "backend": "auto" },         auto | linux | darwin (host deployment)
    "docker": { "image": "<tag>", "instance": "daemon" },   the docker deployment's image
    "console": { "as": { "platform": "cli", "userId": "me" } },  whom the console answers as
    "plugins": { "./plugins/notes": { ... }, "aalis-plugin-x": {} },   plugins to load, each
                                              with its config (paths relative to the config file)
    "model": { "baseURL": "http://127.0.0.1:11434/v1", "model": "qwen2.5-coder",
               "apiKeyEnv": "MODEL_API_KEY", "requestTimeoutMs": 120000 },
                                              the model of the agent and the reviewer: any
                                              OpenAI-compatible chat/completions endpoint; the
                                              key is read from the variable apiKeyEnv names
    "agent": { "maxSteps": 40, "toolResultMaxChars": 20000 },   the agent's limits
    "reach": { "env": { "allow": ["NAME"], "deny": ["NAME"] } },   variables let into (or kept
                                              from) a sandboxed command's environment
    "tools": { "dir": "tools", "engine": "auto" },   the spec tools' directory and engine
    "pod": { ... } }                          the Isolation Pod's config, when it is installed

Stops cleanly on SIGINT or SIGTERM: running commands are killed, pending approvals end as
expired (recorded in the audit log), the plugins stop. One received while it starts stops it
as soon as it has started (no console line is printed then); a second one before the start has
ended exits at once, one during the stop does not.
See packages/cli/DAEMON.md for the API.

Examples:
  aalis serve --dir ~/aalis
  AALIS_DEPLOYMENT=docker AALIS_DOCKER_IMAGE=aalis/sandbox-test:latest aalis serve --port 0
`;

const FLAGS = {
  dir: { type: 'string' },
  data: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  deployment: { type: 'string', choices: DEPLOYMENTS },
  config: { type: 'string' },
} as const;

function portOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(String(value)) || port > 65535) throw new UsageError(`--port '${String(value)}' is not a port; use a whole number from 0 to 65535 (0 picks a free one).`, 'serve');
  return port;
}

/** The plugins the config here would load, for `--help`: each specifier and where it was found. */
function pluginsHelp(dir: string | undefined, configFile: string | undefined): string {
  const configDir = dir !== undefined ? resolve(dir) : (deploymentDirOf(process.cwd()) ?? process.cwd());
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(configDir, configFile);
  } catch (error) {
    return `\nPlugins: the config is not usable (${error instanceof Error ? error.message : String(error)})\n`;
  }
  if (loaded.file === undefined) return `\nPlugins: none (no aalis.config.json in ${configDir})\n`;
  const entries = Object.keys(loaded.config.plugins);
  if (entries.length === 0) return `\nPlugins: none in ${loaded.file}\n`;
  const base = dirname(loaded.file);
  const lines = entries.map((specifier) => {
    const from = locatePlugin(specifier, base);
    return `  ${specifier.padEnd(28)} ${from === undefined ? 'NOT FOUND: the daemon will start without it' : from}`;
  });
  return `\nPlugins in ${loaded.file} (loaded in dependency order at start; one that fails is left out and named):\n${lines.join('\n')}\n`;
}

/** SIGINT and SIGTERM, listened to from before the daemon starts until its stop is done. */
interface StopSignals {
  /** The signal received so far, if any. */
  readonly received: () => NodeJS.Signals | undefined;
  /** Stops `daemon` at the first signal (at once when one came during the start); resolves with the exit status. */
  readonly stopOn: (daemon: RunningDaemon) => Promise<number>;
  /** Stops listening (the daemon did not start). */
  readonly off: () => void;
}

/**
 * Listens for SIGINT and SIGTERM from the process's start, not from the console line's print: a
 * supervisor (or a test) that reads that line and stops the daemon at once could signal it before
 * a handler was there, and the default action (or execa's clean-up, which re-raises the signal
 * when it finds itself the only listener) killed it mid-stop, its commands and lock left behind.
 */
function stopSignals(io: CliIo): StopSignals {
  let received: NodeJS.Signals | undefined;
  let onFirst: ((signal: NodeJS.Signals) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received !== undefined) {
      // a start that does not end (a probe that hangs) must not leave Ctrl-C without an effect
      if (onFirst === undefined) {
        io.stderr(`aalis serve: ${signal} received again while starting; exiting now\n`);
        process.exit(1);
      }
      io.stderr(`aalis serve: ${signal} received again; already stopping\n`);
      return;
    }
    received = signal;
    io.stderr(`aalis serve: ${signal} received${onFirst ? '' : ' while starting; stopping once started'}\n`);
    onFirst?.(signal);
  };
  // The handlers stay until the stop is done: other listeners (execa's child clean-up) re-raise
  // the signal, killing the process mid-stop, when they find themselves the only listener.
  const off = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stopOn = (daemon: RunningDaemon) =>
    new Promise<number>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        daemon.stop(`the daemon received ${signal}`).then(
          () => {
            off();
            resolve(0);
          },
          (error: unknown) => {
            io.stderr(`aalis serve: the stop did not finish cleanly: ${error instanceof Error ? error.message : String(error)}\n`);
            off();
            resolve(1);
          },
        );
      };
      // set either way: a second signal during this stop is the stop's ("already stopping"), not
      // the start's, even when the first came during the start (it exited mid-stop, its plugins
      // not stopped and its lock file left)
      onFirst = stop;
      if (received !== undefined) stop(received);
    });
  return { received: () => received, stopOn, off };
}

/** `aalis serve`: the daemon. */
export async function serveCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags, positionals, rest } = parse('serve', argv, FLAGS);
  if (flags.help) {
    io.stdout(SERVE_HELP + pluginsHelp(typeof flags.dir === 'string' ? flags.dir : undefined, typeof flags.config === 'string' ? flags.config : undefined));
    return 0;
  }
  if (positionals.length > 0 || rest.length > 0) throw new UsageError(`serve takes no arguments (got '${[...positionals, ...rest].join(' ')}'); the deployment directory goes in --dir.`, 'serve');
  // bad values are usage errors (exit 2), said before anything starts
  const port = flags.port !== undefined ? portOf(flags.port) : undefined;
  if (typeof flags.host === 'string' && flags.host.trim() === '') {
    throw new UsageError("--host '' names no address (an empty one would listen on every interface); give one, e.g. --host 127.0.0.1, or leave it out for the default.", 'serve');
  }
  const progress = (line: string) => io.stderr(`aalis serve: ${line}\n`);
  const signals = stopSignals(io);
  let daemon: RunningDaemon;
  try {
    daemon = await startDaemon({
      ...(typeof flags.dir === 'string' ? { deploymentDir: flags.dir } : {}),
      ...(typeof flags.data === 'string' ? { dataDir: flags.data } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(typeof flags.host === 'string' ? { host: flags.host } : {}),
      ...(flags.deployment !== undefined ? { deployment: flags.deployment as Deployment } : {}),
      ...(typeof flags.config === 'string' ? { configFile: flags.config } : {}),
      progress,
    });
  } catch (error) {
    signals.off();
    if (error instanceof ConfigError) {
      io.stderr(`aalis serve: the config is not usable, so the daemon did not start:\n  ${error.message}\n`);
      return 2;
    }
    // a bad argument (--dir that is not a directory, a path not UTF-8) is the user's to fix: exit 2
    if (error instanceof UsageError || (error as { code?: unknown }).code === 'bad-path') throw error;
    io.stderr(`aalis serve: the daemon did not start: ${errorText(error)}\n`);
    return 1;
  }
  progress(`deployment ${daemon.deployment.mode} (from ${daemon.deployment.source}), data in ${daemon.dataDir}`);
  progress(`API on ${daemon.url}/api/ (Authorization: Bearer <token>)`);
  // The one line a person needs, on stdout so a script can take it: where the console is, never
  // the token (console-codes.ts); not when a signal came during the start, which stops it at once.
  if (signals.received() === undefined) {
    if (daemon.consoleOrigin === undefined) {
      io.stdout('console: none\n');
      progress(`no console: it is served on the loopback only, and this daemon listens on ${daemon.url} only`);
    } else if (process.stdout.isTTY === true) {
      // a terminal: the address with a one-time code, opened with a click
      io.stdout(`console: ${daemon.consoleAddress().address}\n`);
      progress("that address opens the console once, within 30 minutes; 'aalis console' prints a new one");
    } else {
      // a log (a service's journal, a CI log, a pipe to a file) keeps what it is given, and a live
      // code in it would open the console (and give the token) to whoever reads it in time
      io.stdout(`console: ${daemon.consoleOrigin}/console\n`);
      progress("stdout is not a terminal, so the console's address was printed without its one-time code (a log keeps what it is given): 'aalis console' prints an address that opens it");
    }
  }
  const status = await signals.stopOn(daemon);
  // Everything is stopped; a handle some backend left open must not keep the process alive.
  setTimeout(() => {
    io.stderr('aalis serve: something was still open after the stop; exiting anyway.\n');
    process.exit(status);
  }, 2_000).unref();
  return status;
}
