import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { gitDirLandings, judgeReach, KERNEL_TREES, type LocalReach, matchesRule, type PathRule, type ReachDecision, type ReachRequest } from '@aalis/api-reach';
import { execPlaceOf } from '@aalis/core';
import { denialMessage, describeAsk, describeRequest, reachView, realPathOf } from '@aalis/plugin-reach';
import { hostToldLandingOf } from '@aalis/plugin-tools';
import { parse } from './args.js';
import { boundaryOf, TIER_CHOICES, tierOf } from './choices.js';
import { chooseDataDir } from './data-dir.js';
import { type CliIo, UsageError } from './io.js';
import { startLocal } from './runtime.js';

export const EXPLAIN_HELP = `aalis explain: why a read, write, command or network use is allowed, asked or refused

Usage: aalis explain <read|write|exec|network> [PATH] [options]

Judges one request the way a tool call of the owner would be judged, in a conversation whose main
directory is the current directory (or --cwd), and prints the verdict, the rule or reason, the
list item that matched with its source (control plane, landing, git dir, deny-read, writable
root), and what you can do about it.

Options:
  --tier TIER          ${TIER_CHOICES.join(' | ')}  (default workspace)
  --boundary POLICY    ask | deny (default ask)
  --cwd DIR            the main directory (default the current directory)
  --allow-write PATH   an extra writable root (repeatable)
  --host               for exec: a command outside the sandbox (default: where the tier runs it)
  --via KIND           for network: url | command | provider (default command)
  --data DIR           the data directory (default $AALIS_DATA, else data/ beside the nearest
                       aalis.config.json, else ~/.local/share/aalis)
  --json               machine-readable output
  -h, --help           this help

Examples:
  aalis explain write .git/hooks/pre-commit
  aalis explain read ~/.ssh/id_ed25519 --json
  aalis explain exec --tier confirm
`;

/** The list item that decided a path, with where it comes from. */
export interface Match {
  readonly list: 'kernelTree' | 'control' | 'landing' | 'denyRead' | 'writableRoot' | 'sessionTmp';
  readonly source: string;
  readonly rule: PathRule | { path: string };
}

/** The answer of `explain`, also its `--json` form. */
export interface Explanation {
  readonly request: ReachRequest;
  readonly tier: string;
  readonly boundary: string;
  readonly decision: ReachDecision;
  readonly match: Match | null;
  /**
   * Why the path is a landing only the host tells (a nested repository's hooks, what an `.envrc`
   * above it loads, a folder the write would make a repository): the host tools refuse the write
   * in the sandboxed tiers and the sandbox's commit leaves it out, whatever the verdict says (the
   * policy names none of these). Null when it is none, or the tier runs on the host.
   */
  readonly hostLanding: string | null;
  readonly advice: string;
}

/** Finds the item of the reach's lists that decided a path request. */
export function matchOf(reach: LocalReach, request: ReachRequest): Match | null {
  if (!('path' in request)) return null;
  const { platform } = reach.lists;
  const first = (rules: readonly PathRule[]) => rules.find((rule) => matchesRule(rule, request.path, platform));
  const tree = platform === 'linux' ? KERNEL_TREES.find((t) => matchesRule({ path: t }, request.path, platform)) : undefined;
  if (tree) return { list: 'kernelTree', source: "the daemon's own view of the kernel (host-side reads and writes only)", rule: { path: tree } };
  if (request.effect === 'read') {
    if (matchesRule({ path: reach.sessionTmp }, request.path, platform)) return { list: 'sessionTmp', source: 'the session temp (always readable)', rule: { path: reach.sessionTmp } };
    const rule = first(reach.lists.denyRead);
    return rule ? { list: 'denyRead', source: 'deny-read list', rule } : null;
  }
  const control = first(reach.lists.control);
  if (control) return { list: 'control', source: 'host control plane', rule: control };
  const landing = first(reach.lists.landing);
  if (landing) {
    const fromGit = gitDirLandings(reach.gitDirs).some((g) => JSON.stringify(g) === JSON.stringify(landing));
    return { list: 'landing', source: fromGit ? 'git dir of this repository' : 'persistence and auto-execution landing', rule: landing };
  }
  const root = reach.writableRoots.find((r) => matchesRule({ path: r }, request.path, platform));
  return root ? { list: 'writableRoot', source: 'writable root of this tier', rule: { path: root } } : null;
}

function adviceOf(request: ReachRequest, decision: ReachDecision, tier: string): string {
  switch (decision.verdict) {
    case 'allow':
      return decision.landing ? 'Allowed in the full tier; the write is recorded in the audit log.' : 'Allowed: nothing to do.';
    case 'ask':
      return `Asked, because ${describeAsk(decision.reason)}. Approve it when asked (once, or remember for the session), or change the reach (--tier, --allow-write) so it is not asked.`;
    case 'deny':
      return denialMessage(request, decision, tier);
  }
}

function ruleText(rule: Match['rule']): string {
  const main = 'path' in rule ? `path ${rule.path} (and everything under it)` : `pattern /${rule.pattern}/`;
  const except = 'except' in rule && rule.except?.length ? `, except ${rule.except.map((e) => ('path' in e ? e.path : `/${e.pattern}/`)).join(', ')}` : '';
  return main + except;
}

/** `aalis explain`. */
export async function explainCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parse('explain', argv, {
    tier: { type: 'string', choices: TIER_CHOICES },
    boundary: { type: 'string', choices: ['ask', 'deny'] },
    cwd: { type: 'string' },
    'allow-write': { type: 'string', multiple: true },
    host: { type: 'boolean' },
    via: { type: 'string', choices: ['url', 'command', 'provider'] },
    data: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (flags.help) {
    io.stdout(EXPLAIN_HELP);
    return 0;
  }
  const [effect, path, ...extra] = positionals;
  if (effect === undefined || !['read', 'write', 'exec', 'network'].includes(effect)) {
    throw new UsageError(`say what to explain: read PATH, write PATH, exec or network${effect ? ` ('${effect}' is none of them)` : ''}.`, 'explain');
  }
  if ((effect === 'read' || effect === 'write') && path === undefined) throw new UsageError(`'explain ${effect}' needs a PATH.`, 'explain');
  if (extra.length > 0 || ((effect === 'exec' || effect === 'network') && path !== undefined)) throw new UsageError(`unexpected argument '${extra[0] ?? path}'.`, 'explain');
  const tier = tierOf(flags.tier, 'explain');
  const boundary = boundaryOf(flags.boundary);
  const cwd = realpathSync.native(resolve(typeof flags.cwd === 'string' ? flags.cwd : process.cwd()));
  const allowWrite = ((flags['allow-write'] as string[] | undefined) ?? []).map((p) => realpathSync.native(resolve(p)));
  const runtime = await startLocal({ tier, boundary, cwd, allowWrite, backend: 'none', data: chooseDataDir({ data: flags.data as string | undefined }), io });
  try {
    const reach = await runtime.kernel.get(reachView).reachOf(runtime.turn);
    if (reach.exec === 'none') throw new Error('this terminal user is not the owner; nothing has local effect');
    const request: ReachRequest =
      effect === 'exec'
        ? { effect: 'exec', host: flags.host === true || execPlaceOf(tier) === 'host' }
        : effect === 'network'
          ? { effect: 'network', via: (flags.via as 'url' | 'command' | 'provider' | undefined) ?? 'command' }
          : { effect: effect as 'read' | 'write', path: await realPathOf(path as string, cwd) };
    const decision = judgeReach(reach, request);
    // plugin-tools' own check, as a write_file of this call would meet it
    const hostLanding = request.effect === 'write' && decision.verdict !== 'deny' && execPlaceOf(tier) !== 'host' ? (hostToldLandingOf(cwd, request.path) ?? null) : null;
    const explanation: Explanation = { request, tier, boundary, decision, match: matchOf(reach, request), hostLanding, advice: hostLanding ?? adviceOf(request, decision, tier) };
    if (flags.json) {
      io.stdout(`${JSON.stringify(explanation, null, 2)}\n`);
      return 0;
    }
    const verdict = hostLanding !== null ? 'deny (rule: landing, read from the host: the host tools refuse it, the sandbox leaves it out)' :
      decision.verdict === 'allow'
        ? `allow${decision.landing ? ' (landing, audited)' : ''}`
        : decision.verdict === 'ask'
          ? `ask (${decision.reason.kind}${decision.reason.kind === 'boundary' ? `: ${decision.reason.target}` : ''})`
          : `deny (rule: ${decision.rule})`;
    const lines = [
      `${describeRequest(request)}`,
      `  tier:     ${tier}, boundary ${boundary}`,
      `  verdict:  ${verdict}`,
      ...(explanation.match ? [`  matched:  ${ruleText(explanation.match.rule)}`, `  source:   ${explanation.match.source}`] : []),
      `  advice:   ${explanation.advice}`,
    ];
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await runtime.stop();
  }
}
