import { type SbplNode, readSbpl } from './sbpl-reader.js';

// Decides one operation against a profile the way Seatbelt is documented (by the measurements
// the README cites) to: the last rule whose operation and filter match wins. Written apart from
// the generator, on the text the strict reader returns, so a test asks "what would a Mac answer"
// rather than "did the generator do what it meant". What it models, from public facts:
// - an operation `x*` covers every `x-…` operation; the bare `ipc-posix-shm` covers all of them;
// - filters in one rule are alternatives; `require-all`/`-any`/`-not` combine them;
// - `(remote ip "localhost:P")` matches 127.0.0.1 and ::1 only, not ::ffff:127.0.0.1 (sandbox-runtime
//   measured this for local binds); `*` matches every host; `(remote ip)` matches any address.
// An unknown filter throws: a test must not pass because the decider ignored something.

/** One operation to decide, with what its filters look at. */
export interface SbplRequest {
  readonly op: string;
  /** File operations: the path as the kernel reports it. */
  readonly path?: string;
  readonly remoteIp?: { readonly host: string; readonly port: number };
  readonly localIp?: { readonly host: string; readonly port: number };
  readonly remoteUnix?: string;
  readonly localUnix?: string;
  readonly sysctl?: string;
  readonly ipcName?: string;
  readonly globalName?: string;
  /** Sandbox extensions the target holds (`com.apple.sandbox.pty` for a pty the sandbox opened). */
  readonly extensions?: readonly string[];
  readonly socketDomain?: string;
  readonly sameSandbox?: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', '::1']);

function opMatches(ruleOp: string, op: string): boolean {
  if (ruleOp === 'default') return true;
  if (ruleOp === op) return true;
  if (ruleOp.endsWith('*')) return op.startsWith(ruleOp.slice(0, -1));
  if (ruleOp === 'ipc-posix-shm') return op.startsWith('ipc-posix-shm');
  return false;
}

function ipMatches(spec: string | undefined, actual: { host: string; port: number } | undefined): boolean {
  if (actual === undefined) return false;
  if (spec === undefined) return true;
  const at = spec.lastIndexOf(':');
  const host = spec.slice(0, at);
  const port = spec.slice(at + 1);
  const hostOk = host === '*' || (host === 'localhost' && LOOPBACK.has(actual.host));
  if (host !== '*' && host !== 'localhost') throw new Error(`an ip filter host must be * or localhost, not ${host}`);
  return hostOk && (port === '*' || Number(port) === actual.port);
}

function str(node: SbplNode | undefined): string {
  if (node?.type !== 'string') throw new Error(`expected a string, got ${JSON.stringify(node)}`);
  return node.value;
}

const compiled = new Map<string, RegExp>();
function regexOf(source: string, flags = ''): RegExp {
  const key = `${flags}:${source}`;
  let regex = compiled.get(key);
  if (regex === undefined) {
    regex = new RegExp(source, flags);
    compiled.set(key, regex);
  }
  return regex;
}

function pathFilterMatches(kind: string, value: string, path: string | undefined): boolean {
  if (path === undefined) return false;
  if (kind === 'literal') return path === value;
  if (kind === 'subpath') return value === '/' || path === value || path.startsWith(`${value}/`);
  return regexOf(value, 's').test(path);
}

function filterMatches(node: SbplNode, req: SbplRequest): boolean {
  if (node.type !== 'list') throw new Error(`a filter must be a list, got ${JSON.stringify(node)}`);
  const [head, ...rest] = node.items;
  const name = head?.type === 'symbol' ? head.value : '';
  switch (name) {
    case 'require-any':
      return rest.some((item) => filterMatches(item, req));
    case 'require-all':
      return rest.every((item) => filterMatches(item, req));
    case 'require-not':
      return !filterMatches(rest[0]!, req);
    case 'literal':
    case 'subpath':
    case 'regex':
      return pathFilterMatches(name, str(rest[0]), req.path);
    case 'remote':
    case 'local': {
      const what = rest[0]?.type === 'symbol' ? rest[0].value : '';
      if (what === 'ip') return ipMatches(rest[1] === undefined ? undefined : str(rest[1]), name === 'remote' ? req.remoteIp : req.localIp);
      if (what === 'unix-socket') {
        const socket = name === 'remote' ? req.remoteUnix : req.localUnix;
        return socket !== undefined && filterMatches(rest[1]!, { op: req.op, path: socket });
      }
      throw new Error(`unknown ${name} filter ${what}`);
    }
    case 'sysctl-name':
      return req.sysctl === str(rest[0]);
    case 'sysctl-name-prefix':
      return req.sysctl?.startsWith(str(rest[0])) ?? false;
    case 'ipc-posix-name':
      return req.ipcName === str(rest[0]);
    case 'ipc-posix-name-prefix':
      return req.ipcName?.startsWith(str(rest[0])) ?? false;
    case 'ipc-posix-name-regex':
      return req.ipcName !== undefined && regexOf(str(rest[0])).test(req.ipcName);
    case 'global-name':
      return req.globalName === str(rest[0]);
    case 'extension':
      return req.extensions?.includes(str(rest[0])) ?? false;
    case 'socket-domain':
      return rest[0]?.type === 'symbol' && req.socketDomain === rest[0].value;
    case 'target':
      return rest[0]?.type === 'symbol' && rest[0].value === 'same-sandbox' && req.sameSandbox === true;
    default:
      throw new Error(`the decider does not know the filter (${name} …)`);
  }
}

/** Where in the profile the deciding rule stands, and what it said. */
export interface SbplDecision {
  readonly action: 'allow' | 'deny';
  /** Index of the deciding top-level form. */
  readonly form: number;
}

/** The decision for `req` under `profile` (text or read forms): the last matching rule wins. */
export function decide(profile: string | readonly SbplNode[], req: SbplRequest): SbplDecision {
  const forms = typeof profile === 'string' ? readSbpl(profile) : profile;
  let decision: SbplDecision = { action: 'deny', form: -1 };
  forms.forEach((form, index) => {
    if (form.type !== 'list') return;
    const [action, ...rest] = form.items;
    if (action?.type !== 'symbol' || (action.value !== 'allow' && action.value !== 'deny')) return;
    const ops = rest.filter((item) => item.type === 'symbol').map((item) => (item as { value: string }).value);
    const filters = rest.filter((item) => item.type === 'list');
    if (!ops.some((op) => opMatches(op, req.op))) return;
    if (filters.length > 0 && !filters.some((filter) => filterMatches(filter, req))) return;
    decision = { action: action.value, form: index };
  });
  return decision;
}
