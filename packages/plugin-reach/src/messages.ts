import { isAbsolute, relative } from 'node:path';
import type { ReachAskReason, ReachDecision, ReachRequest } from '@aalis/api-reach';
import { type ApprovalOutcome, escapeInvisible } from '@aalis/core';

/** What a request wants, as a person reads it. */
export function describeRequest(request: ReachRequest): string {
  switch (request.effect) {
    case 'read':
      return `reading ${oneLine(request.path)}`;
    case 'write':
      if (!('path' in request)) return `writing the workflow '${request.workflow}'`;
      // a path may hold a newline too: in the one-line summary it would read as a space between two paths
      return request.toMake === undefined
        ? `writing ${oneLine(request.path)}`
        : `writing in ${oneLine(request.path)}, to make ${oneLine(request.toMake)} there (a command was refused it; the sandbox can only grant a new entry through its directory)`;
    case 'exec': {
      const { command } = request;
      const input = command?.stdin ? `, with its input \`${oneLine(command.stdin)}\`` : '';
      const named = command ? ` \`${oneLine(commandLine(command.argv))}\` in ${oneLine(command.cwd)}${input}` : ' a command';
      return request.host ? `running${named} on the host (outside the sandbox)` : `running${named} in the sandbox`;
    }
    case 'network':
      return `network access (${request.via})`;
  }
}

/** Why a request is asked, as a person reads it. */
export function describeAsk(reason: ReachAskReason): string {
  switch (reason.kind) {
    case 'tier':
      return 'the confirm tier asks before every write and every command';
    case 'landing':
      return 'it is a persistence or auto-execution landing (shell startup files, git hooks and config, editor and agent settings, project instructions, self/): what is written there takes effect later on its own';
    case 'boundary':
      return reason.target === 'write-path'
        ? 'it is outside the roots this tier writes without asking'
        : reason.target === 'host-exec'
          ? 'this tier runs commands in the sandbox, and this one is to run outside it'
          : 'this tier has no network without asking';
  }
}

/**
 * The message of a denial: what was wanted, why not, and what can be done (or that nothing can).
 * `personSpaces` (the docker deployment's directory of person spaces) lets a refusal there say
 * that the path is another person's, not one of the host's protected files.
 */
export function denialMessage(request: ReachRequest, decision: Extract<ReachDecision, { verdict: 'deny' }>, tier: string, personSpaces?: string): string {
  const what = describeRequest(request);
  if ((decision.rule === 'deny-read' || decision.rule === 'control-plane') && personSpaces !== undefined && 'path' in request && isWithinDir(request.path, personSpaces)) {
    return `${what} was refused (rule: ${decision.rule}): it is in ${personSpaces}, the docker deployment's person spaces, and only your own space there is yours; every other person's space and session temp is theirs alone, in any tier, whoever asks or approves. This cannot be requested; work in your own workspace.`;
  }
  switch (decision.rule) {
    case 'no-local-effect':
      return `${what} was refused (rule: no-local-effect): this call acts for someone who is not the owner, so it has no effect on this machine. This cannot be requested; the owner can do it in a turn of their own.`;
    case 'control-plane':
      return `${what} was refused (rule: control-plane): it is part of the host control plane (the daemon's state, configuration, secrets and loaded code), which no tier may write. This cannot be requested.`;
    case 'deny-read':
      return `${what} was refused (rule: deny-read): it is on the deny-read list (credential files, yours and other accounts', the machine's password and key files, .env files, browser profiles, the daemon's private data, other instances' data). This cannot be requested.`;
    case 'kernel-tree':
      return `${what} was refused (rule: kernel-tree): /proc and /sys, read by a tool call on the host side, are the daemon's own process and the host's kernel (its memory, environment and keys), not files of yours. This cannot be requested; run a command instead ('cat /proc/cpuinfo'): the sandbox has a /proc of its own.`;
    case 'boundary-policy':
      return `${what} was refused (rule: boundary-policy): it would be asked because ${describeAsk(decision.reason)}, but the boundary policy of this conversation is 'deny' (tier ${tier}). ${remedy(decision.reason)}`;
  }
}

/** Whether `path` is `dir` or under it (both real paths, as the judge compares them). */
function isWithinDir(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The message when an ask was not approved. */
export function notApprovedMessage(request: ReachRequest, reason: ReachAskReason, outcome: Exclude<ApprovalOutcome, { outcome: 'approved' }> | { outcome: 'unavailable' }): string {
  const what = `${describeRequest(request)} needs approval because ${describeAsk(reason)}`;
  switch (outcome.outcome) {
    case 'rejected':
      return `${what}, and it was rejected${typeof outcome.by === 'string' ? ` by the ${outcome.by}` : ''}: ${outcome.reason}. Nothing was done; try another way or ask the owner.`;
    case 'expired':
      return `${what}, and nobody answered within ${Math.round(outcome.afterMs / 1000)} s, so it expired. Nothing was done.`;
    case 'unavailable':
      return `${what}, and there is no approval service here to ask. Nothing was done; ${remedy(reason)}`;
  }
}

function remedy(reason: ReachAskReason): string {
  switch (reason.kind) {
    case 'boundary':
      return reason.target === 'write-path'
        ? 'Write inside the workspace, add a writable root, or set the boundary policy to ask.'
        : reason.target === 'host-exec'
          ? 'Run it in the sandbox, or raise the tier to confirm or full.'
          : 'Set the boundary policy to ask, or use a tier with network.';
    case 'landing':
      return 'Set the boundary policy to ask to be asked for it, or write somewhere that is not a landing.';
    case 'tier':
      return 'Approve it when asked, or raise the tier.';
  }
}

/** A command as a person reads it: the shell string of `/bin/sh -c`, or the argv quoted for a POSIX shell. */
export function commandLine(argv: readonly string[]): string {
  if (argv.length === 3 && argv[0] === '/bin/sh' && argv[1] === '-c') return argv[2] ?? '';
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`)).join(' ');
}

/**
 * At most 400 characters on one line: control, format (bidi) and separator characters shown escaped,
 * so a summary stays one line and reads in the order it runs.
 */
function oneLine(text: string): string {
  const escaped = escapeInvisible(text);
  return escaped.length > 400 ? `${escaped.slice(0, 400)}… (${escaped.length} characters; the ask's subject holds it whole)` : escaped;
}
