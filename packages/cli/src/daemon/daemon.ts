import { realpathSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { AalisError, type Deployment, DurableStore, HTTP_STATUS_BY_CODE, writeFileAtomic } from '@aalis/core';
import { AuditLog } from '@aalis/plugin-approval';
import { reachBindings } from '@aalis/plugin-reach';
import { CONSOLE_CSP, CONSOLE_PAGE } from '../console/page.js';
import { registerDaemon, registryDir } from '../daemon-registry.js';
import { chooseDataDir, type DataDirChoice, deploymentDirOf, otherInstances } from '../data-dir.js';
import { terminalIdentity } from '../install.js';
import { forTerminalLine } from '../terminal-text.js';
import { hostAllowed } from './host-header.js';
import { UsageError } from '../io.js';
import { ownDir } from '../own-dir.js';
import { handleApi } from './api.js';
import { CallTracker } from './calls.js';
import { type DaemonConfig, loadConfig } from './config.js';
import { claimDataDir } from './data-dir-lock.js';
import { commandDescendantsOf, killSurvivors, sandboxesUnder } from './descendants.js';
import { dockerPlacer } from './docker-place.js';
import { type ChosenDeployment, chooseDeployment } from './deployment.js';
import { guardConnections, OPEN_BODY_DEADLINE_MS, OPEN_BODY_MAX_BYTES } from './connection-guard.js';
import { EventLoopWatch } from './event-loop.js';
import { EventHub } from './events.js';
import { ApiError, bodyOf, sendError, sendJson } from './http.js';
import { type DaemonKernel, personsOf, startKernel } from './kernel.js';
import type { PodRouteHandler } from './pod.js';
import { SessionIndex } from './session-index.js';
import { PodCapabilities } from './pod-capability.js';
import { ConsoleCodes, consoleOrigin } from './console-codes.js';
import { ConsoleClaimAnswerSchema, ConsoleClaimBody } from './payloads.js';
import { isIP } from 'node:net';
import { bearerMatches, bearerOf, isLoopback, newToken, PROOF_NONCE, proofAddressOf, proofOf } from './token.js';
import { AdapterTokens } from './adapter-tokens.js';
import { type ApiClient, OWNER_CLIENT } from './api-client.js';

/** How to start the daemon. */
export interface DaemonOptions {
  /**
   * The deployment directory (`--dir`): the config file and (by default) `data/` are there.
   * Without it, the nearest of the current directory and its ancestors holding `aalis.config.json`.
   */
  readonly deploymentDir?: string;
  readonly dataDir?: string;
  /** 0 picks a free port. Default: the config's, else 8787. */
  readonly port?: number;
  /** Default: the config's, else 127.0.0.1. */
  readonly host?: string;
  readonly deployment?: Deployment;
  readonly configFile?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Progress lines for long steps (the CLI prints them on stderr). */
  readonly progress?: (line: string) => void;
}

/** A running daemon. */
export interface RunningDaemon {
  /** `http://host:port` of the API. */
  readonly url: string;
  /** Where the console is (a loopback IP literal, console-codes.ts `consoleOrigin`); undefined when the daemon does not listen on the loopback. */
  readonly consoleOrigin: string | undefined;
  /** A new console address with a one-time code in its fragment (console-codes.ts): it opens the console once, within its time. Throws when there is no {@link consoleOrigin}. */
  consoleAddress(): { address: string; expiresAt: number };
  readonly token: string;
  readonly port: number;
  readonly deployment: ChosenDeployment;
  readonly dataDir: string;
  readonly configFile: string | undefined;
  readonly kernel: DaemonKernel['kernel'];
  /** Stops: running commands are killed, pending approvals end as expired (audited), the kernel stops. */
  stop(reason?: string): Promise<void>;
}

const DEFAULT_PORT = 8787;

/** How many requests one adapter's token may hold open at once (its event stream, its calls and turns); past it, 429. */
export const ADAPTER_MAX_REQUESTS = 64;
/** How long aborted commands get to end by themselves before their processes are killed. */
const ABORT_GRACE_MS = 1_000;
/** How long a stop waits for aborted calls to answer their callers before closing connections. */
const STOP_GRACE_MS = 5_000;

function directory(path: string, what: string): string {
  let real: string;
  try {
    real = realpathSync.native(resolve(path));
  } catch {
    throw new UsageError(`${what} '${path}' does not exist; create it, or point ${what} at an existing directory.`, 'serve');
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`${what} '${path}' is not a directory.`, 'serve');
  return real;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') reject(new Error(`port ${port} on ${host} is already in use; stop what listens there or pick another with --port (0 picks a free one).`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new Error(`${host} is not an address of this machine; use --host 127.0.0.1 (the default).`));
      else if (error.code === 'EACCES') reject(new Error(`port ${port} needs privileges to listen on; pick a port above 1023 with --port.`));
      else reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      const address = server.address();
      resolvePort(typeof address === 'object' && address ? address.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * Starts the daemon: reads the config, binds the port (so the sandbox can be told to keep off
 * it), starts the kernel, then serves the API and the console. Throws with a message a person
 * can act on when any step fails; nothing is left listening then.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const env = options.env ?? process.env;
  const progress = options.progress ?? (() => {});
  const found = options.deploymentDir !== undefined ? directory(options.deploymentDir, '--dir') : deploymentDirOf(process.cwd());
  const configDir = found ?? process.cwd();
  const { file: configFile, config } = loadConfig(configDir, options.configFile);
  progress(configFile ? `config: ${configFile}` : `no aalis.config.json in ${configDir}: using the defaults`);
  const deployment = chooseDeployment(options.deployment, config.deployment, env);
  // The same rule as every other command's, so `aalis exec` run here knows this data directory.
  const data = chooseDataDir({ data: options.dataDir, dir: found, env });
  const dataDir = data.dataDir;
  // its token, grants and audit log: a directory another user made first (under /tmp, say) is refused
  ownDir(dataDir, 'the data directory', '--data DIR or another --dir', data.source === '--data' || data.source === 'AALIS_DATA' ? 'leaf' : true);
  // One daemon per data directory, taken before anything in it is read or written.
  const releaseDataDir = claimDataDir(dataDir);
  try {
    return await startOn(options, { env, progress, configFile, config, deployment, data, releaseDataDir });
  } catch (error) {
    releaseDataDir();
    throw error;
  }
}

async function startOn(
  options: DaemonOptions,
  { env, progress, configFile, config, deployment, data, releaseDataDir }: { env: NodeJS.ProcessEnv; progress: (line: string) => void; configFile: string | undefined; config: DaemonConfig; deployment: ChosenDeployment; data: DataDirChoice; releaseDataDir: () => void },
): Promise<RunningDaemon> {
  const dataDir = data.dataDir;
  const consoleIdentity = config.console.as ?? terminalIdentity();
  const host = options.host ?? config.server.host ?? '127.0.0.1';
  const token = env.AALIS_TOKEN && env.AALIS_TOKEN.length >= 32 ? env.AALIS_TOKEN : newToken();
  if (env.AALIS_TOKEN && env.AALIS_TOKEN.length < 32) progress('WARNING: AALIS_TOKEN is shorter than 32 characters, so it is not used; a new token was made');

  let ready: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  let stopping = false;
  const server = createServer((req, res) => {
    if (!hostAllowed(req.headers.host, config.server.allowedHosts)) {
      return sendError(res, new ApiError('forbidden', `this daemon does not answer to the name in the request's Host header ('${forTerminalLine(String(req.headers.host)).slice(0, 100)}'): a web page may have made its own name point at this machine (DNS rebinding), so nothing was done.`, { fix: 'use the daemon\'s address (http://127.0.0.1:<port>) or localhost, or list the name in server.allowedHosts of aalis.config.json' }));
    }
    if (stopping) return sendError(res, new ApiError('stopping', 'the daemon is stopping; try again after it restarts.'));
    if (!ready) return sendError(res, new ApiError('stopping', 'the daemon is still starting; try again in a moment.'));
    // a package's error with a code the one status table knows (a session's root-mismatch, a body's
    // problem, a safe file refusal) is answered as itself; anything else is the daemon's failure
    ready(req, res).catch((error: unknown) => sendError(res, error instanceof AalisError && (error instanceof ApiError || HTTP_STATUS_BY_CODE[error.code] !== undefined) ? error : new ApiError('internal', `the daemon failed to answer: ${error instanceof Error ? error.message : String(error)}`)));
  });
  server.requestTimeout = 0; // tool calls wait for approvals and commands; each has its own timeout
  const guard = guardConnections(server);
  progress(`listening on ${host}…`);
  const port = await listen(server, options.port ?? config.server.port ?? DEFAULT_PORT, host);

  // Noted before the kernel starts, so a command run meanwhile already keeps off this data and port.
  let unregister: () => Promise<void> = async () => {};
  try {
    unregister = await registerDaemon({ dataDir: realpathSync.native(dataDir), port }, env);
  } catch (error) {
    // Commands run from the deployment directory still know this data directory by the shared
    // rule; commands run elsewhere do not, so say so.
    progress(`WARNING: could not note this daemon in ${registryDir(env)} (${(error as Error).message}); aalis commands run outside ${data.deployment ?? dataDir} will not know its data directory and port`);
  }
  const others = otherInstances(data, env);
  let started: DaemonKernel;
  try {
    started = await startKernel({ dataDir, deploymentDir: data.deployment, otherData: others.otherData, localPorts: [port, ...others.ports], configFile, config, deployment, port, consoleIdentity, env, progress });
  } catch (error) {
    await unregister();
    await new Promise<void>((r) => server.close(() => r()));
    throw error;
  }
  const { kernel } = started;
  const audit = new AuditLog(await DurableStore.open(join(dataDir, 'approval')));
  const daemonDir = join(dataDir, 'daemon');
  const index = await SessionIndex.open(daemonDir);
  const adapters = await AdapterTokens.open(await DurableStore.open(daemonDir));
  // each adapter's requests under way, so a removed or replaced token ends them all at once: its
  // client was decided from the headers, and a body (or a call's wait) may come long after
  const adapterRequests = new Map<string, Set<ServerResponse>>();
  const hangUpAdapter = (name: string) => {
    for (const res of adapterRequests.get(name) ?? []) res.destroy();
    adapterRequests.delete(name);
  };
  // For adapters on this machine; the data directory is outside every sandboxed tier's reads.
  // A new file each (temp, rename, never through a symlink): one already there keeps its owner and
  // mode when written over in place, and a symlink put there would take the token elsewhere.
  const realDaemonDir = realpathSync.native(daemonDir);
  await writeFileAtomic(join(realDaemonDir, 'token'), `${token}\n`, { mode: 0o600 });
  // Where `aalis pod` and other local clients find this daemon.
  await writeFileAtomic(join(realDaemonDir, 'url'), `http://${host.includes(':') ? `[${host}]` : host}:${port}\n`, { mode: 0o600 });
  const hub = new EventHub(kernel.events);
  const calls = new CallTracker();
  const podRoutes: PodRouteHandler | undefined = started.pod?.routes(kernel);
  const podCapabilities = new PodCapabilities();
  // a token fixed by AALIS_TOKEN outlives the daemon: no tab keeps it (console-codes.ts)
  const consoleCodes = new ConsoleCodes(token, token !== env.AALIS_TOKEN);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const bound = server.address();
  const origin = typeof bound === 'object' && bound !== null ? consoleOrigin(bound.address, port) : undefined;
  const consoleAddress = () => {
    if (origin === undefined) {
      throw new ApiError('unavailable', `the console is served on the loopback only, and this daemon listens on ${host} only.`, { fix: 'start the daemon with --host 127.0.0.1 (the default), or an address that takes the loopback too (0.0.0.0)' });
    }
    const { code, expiresAt } = consoleCodes.issue('console');
    return { address: `${origin}/console#code=${code}`, expiresAt };
  };
  // The docker deployment: each person of a conversation works in their own space.
  const place = started.docker === undefined ? async () => {} : dockerPlacer(started.docker, () => kernel.get(reachBindings));
  const status = () => ({
    deployment: deployment.mode,
    deploymentSource: deployment.source,
    backend: started.backend,
    sandboxWorks: started.probe.available,
    sandboxChecks: started.probe.checks,
    plugins: kernel.status(),
    extensions: started.extensions,
    pod: podRoutes !== undefined,
    console: { as: consoleIdentity },
    pid: process.pid,
  });
  const podCapability = () => {
    if (podRoutes === undefined) throw new ApiError('not-found', started.pod ? 'the Isolation Pod did not start, so there is no panel to open.' : 'the Isolation Pod (@aalis/plugin-pod) is not installed in this daemon.');
    const pass = podCapabilities.issue();
    // the panel is opened with a one-time code for it, never with the capability in its address
    return { ...pass, address: `/pod#code=${consoleCodes.issue('pod', pass.capability).code}` };
  };
  const loop = new EventLoopWatch();
  const persons = started.docker === undefined ? {} : { persons: personsOf(config, consoleIdentity) };
  const ctx = { kernel, audit, index, hub, calls, consoleIdentity, place, status, loop, podCapability, consoleAddress, adapters, hangUpAdapter, ...persons };

  ready = async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://daemon.invalid');
    const isPod = url.pathname === '/pod' || url.pathname === '/pod/' || url.pathname.startsWith('/api/pod/');
    const isClaim = url.pathname === '/api/console/claim';
    if (url.pathname === '/' || url.pathname === '/console' || url.pathname === '/console/' || isPod || isClaim) {
      // The console and the pod's panel are for this machine only, whatever address the API listens on.
      if (!isLoopback(req.socket.remoteAddress)) throw new ApiError('forbidden', 'the console is served on the loopback only; open it on the machine the daemon runs on.');
    }
    if (url.pathname === '/' || url.pathname === '/console' || url.pathname === '/console/') {
      if (req.method !== 'GET') throw new ApiError('method-not-allowed', `${req.method} is not accepted on ${url.pathname}; use GET.`);
      // Loaded by a name (localhost), the page's every request is a new connection to whatever the
      // name resolves to then, and a page cannot see which address it reached: a server another
      // user started on [::1] got its requests while the daemon listened on 127.0.0.1 (found by an
      // attack). It is sent to the address this connection reached (the token rides in the
      // fragment, which a browser keeps across the redirect), where its proof checks the address.
      const at = proofAddressOf(req.socket.localAddress ?? '', req.socket.localPort ?? 0);
      const hostName = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
      if (isIP(hostName) === 0 && isIP(at.address) !== 0) {
        const literal = at.address.includes(':') ? `[${at.address}]` : at.address;
        res.writeHead(307, { location: `http://${literal}:${at.port}${url.pathname}${url.search}`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
        res.end();
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': CONSOLE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        // a page of another origin that opened the console keeps no handle on it: it set the tab's
        // address to '#token=<its own>' and the tab took it (found by an attack)
        'cross-origin-opener-policy': 'same-origin',
      });
      res.end(CONSOLE_PAGE);
      return;
    }
    if (url.pathname === '/healthz') return sendJson(res, 200, { ok: true });
    if (url.pathname === '/api/proof') {
      // no token needed: it proves this daemon knows the token before a client sends it (token.ts)
      if (req.method !== 'GET') throw new ApiError('method-not-allowed', `${req.method} is not accepted on /api/proof; use GET.`);
      const nonce = url.searchParams.get('nonce') ?? '';
      if (!PROOF_NONCE.test(nonce)) throw new ApiError('bad-input', 'give ?nonce= 32 to 128 lower-case hex digits, new for each proof.');
      // the address this connection was made to: a relay's question is answered for the daemon's end, not the relay's
      const at = proofAddressOf(req.socket.localAddress ?? '', req.socket.localPort ?? 0);
      // an adapter's proof is keyed by its token's digest (the daemon keeps no adapter's token): SHA-256 of the token, hex
      const adapter = url.searchParams.get('adapter');
      const key = adapter === null ? token : adapters.proofKeyOf(adapter);
      return sendJson(res, 200, { proof: proofOf(key, nonce, at), address: at.address, port: at.port });
    }
    if (isClaim) {
      // no token needed: the code is the credential, once (console-codes.ts)
      if (req.method !== 'POST') throw new ApiError('method-not-allowed', `${req.method} is not accepted on /api/console/claim; use POST.`);
      // anyone who can connect may send this body, so it is small and prompt or refused
      const body = await bodyOf(req, ConsoleClaimBody, { maxBytes: OPEN_BODY_MAX_BYTES, deadlineMs: OPEN_BODY_DEADLINE_MS });
      const claimed = consoleCodes.claim(body.for, body.id);
      const pages = { console: 'the console (/console)', pod: "the Isolation Pod's panel (/pod)" } as const;
      if (claimed.kind === 'other') {
        throw new ApiError('conflict', `this address is for ${pages[claimed.is]}, not ${pages[body.for]}; it was not spent.`, { fix: `open it at ${claimed.is === 'console' ? '/console' : '/pod'}` });
      }
      if (claimed.kind === 'none') {
        throw new ApiError('unauthorized', 'this address was used already, or has expired, or was made by a daemon that has restarted since: an address opens its page once, within 30 minutes.', {
          fix: "for the console, run 'aalis console' in the deployment (or with --data/--url) for a new address; for the Isolation Pod's panel, open it again from the console",
        });
      }
      return sendJson(res, 200, ConsoleClaimAnswerSchema.parse({ ...claimed.sealed, keep: claimed.keep }));
    }
    if (!url.pathname.startsWith('/api/') && !isPod) throw new ApiError('not-found', `there is nothing at ${url.pathname}; the API is under /api/ and the console at /console.`);
    if (isPod) {
      // The panel's page holds no data (like the console's); its API takes the owner's token or a
      // pod capability the console handed the panel in the address's fragment. No cookie counts:
      // a cookie is not tied to a port, so every other server on 127.0.0.1 would receive it.
      const page = url.pathname === '/pod' || url.pathname === '/pod/';
      const owner = bearerMatches(req, token);
      if (!page && !owner && !podCapabilities.matches(req)) {
        res.setHeader('www-authenticate', 'Bearer realm="aalis-pod"');
        throw new ApiError('unauthorized', "the pod's API needs 'Authorization: Bearer <token>' or a pod capability: open the pod's panel from the console (cookies are not accepted).");
      }
      if (!page) guard.admit(req);
      // the pod answers a capability with less (never another conversation), so it is told which
      if (podRoutes && (await podRoutes(req, res, url, owner ? 'owner' : 'capability'))) return;
      throw new ApiError('not-found', started.pod ? `the Isolation Pod did not start, or has no route ${url.pathname}.` : 'the Isolation Pod (@aalis/plugin-pod) is not installed in this daemon.');
    }
    // the daemon's token is the owner's; an adapter's own token keeps it to its platform (api-client.ts)
    const bearer = bearerOf(req);
    const client: ApiClient | undefined = bearerMatches(req, token) ? OWNER_CLIENT : bearer === undefined ? undefined : adapters.match(bearer);
    if (client === undefined) {
      res.setHeader('www-authenticate', 'Bearer realm="aalis"');
      throw new ApiError('unauthorized', "this needs the daemon's token or an adapter's: send 'Authorization: Bearer <token>' (the daemon's is in <data>/daemon/token, mode 0600; an adapter's is made by 'aalis adapter add').");
    }
    if (client.kind === 'adapter') {
      const held = adapterRequests.get(client.name) ?? new Set<ServerResponse>();
      adapterRequests.set(client.name, held);
      // an adapter's token held ADAPTER_MAX_REQUESTS requests open at once is refused more: one that
      // opened 1,200 slow bodies took every descriptor of a daemon under the usual `ulimit -n 1024`,
      // and the owner's own calls failed (found by an attack, h105); its connection is not kept
      if (held.size >= ADAPTER_MAX_REQUESTS) {
        res.setHeader('connection', 'close');
        throw new ApiError('too-many-requests', `adapter '${client.name}' has ${held.size} requests open at once, the most one adapter may; this one was refused, and nothing was done.`, {
          fix: 'wait for an answer before sending the next request (one event stream and a few calls at a time are plenty), or add another adapter with its own token',
        });
      }
      guard.admit(req);
      held.add(res);
      res.once('close', () => held.delete(res));
    } else guard.admit(req);
    await handleApi(ctx, req, res, url, client);
  };

  let stopped: Promise<void> | undefined;
  const stop = (reason = 'the daemon is stopping') => {
    stopped ??= (async () => {
      stopping = true;
      progress('stopping: killing running commands, expiring pending approvals…');
      const running = commandDescendantsOf(process.pid);
      calls.abortAll(reason);
      // Each sandbox kills its command on abort; whatever still runs a moment later (a host
      // command, which has no abort) is killed here.
      await calls.settled(ABORT_GRACE_MS);
      const survivors = killSurvivors([...running, ...sandboxesUnder(realpathSync.native(dataDir))]);
      if (survivors > 0) progress(`killed ${survivors} process(es) of commands that were still running`);
      await started.stop();
      await calls.settled(STOP_GRACE_MS);
      hub.close();
      loop.stop();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await unregister();
      // a client would read them and send the token to whatever listens on the port next
      for (const name of ['url', 'token']) rmSync(join(realDaemonDir, name), { force: true });
      releaseDataDir();
      progress('stopped.');
    })();
    return stopped;
  };

  return { url, consoleOrigin: origin, consoleAddress, token, port, deployment, dataDir, configFile, kernel, stop };
}
