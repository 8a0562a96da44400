import { type ReachCredential, type SandboxPolicy, SandboxUnavailableError } from '@aalis/api-reach';
import { originatingTurn, type ToolCallContext, ToolError, type ToolErrorKind } from '@aalis/core';
import { credentialOf, requireOrThrow } from '@aalis/plugin-tools';
import { type DockerSandbox, encodeToolEnvelope, isWithin, type SandboxProfileName, type ToolRunFailureKind, toolRunOutcome } from '@aalis/sandbox-docker';
import type { LoadedSpec } from './load-specs.js';

/** The most output a spec tool may print on each of stdout and stderr. */
export const MAX_TOOL_OUTPUT = 1024 * 1024;

/** Where a spec tool call runs: the docker sandbox of the spec tools (its `local` is the host sandbox), and why containers cannot run when they cannot. */
export interface SpecRunDeps {
  readonly box: DockerSandbox;
  /** Set when this deployment has no engine for containers: container profiles are refused with it. */
  readonly noEngine: () => string | undefined;
}

/** How a run's failure kind reads in core's closed set. */
const KIND_OF: Record<ToolRunFailureKind, ToolErrorKind> = { timeout: 'timeout', killed: 'failed', exit: 'failed', 'bad-output': 'bad-output', 'write-denied': 'denied', tool: 'failed' };

/**
 * The policy a spec tool runs under: the call's own deny layers, nothing of the project writable
 * and, in a container, only the tool's folder mounted (002: no project root); on the host
 * (`local`) the host sandbox also keeps the call's read-back temp, the only place it writes. The
 * network only in profile `network`, and only where the call's tier has it.
 */
export function specToolPolicy(base: SandboxPolicy, dir: string, profile: SandboxProfileName): SandboxPolicy {
  const network = profile === 'network' ? base.network : 'off';
  if (profile === 'local') {
    const temps = base.write.filter((root) => base.readAllowWithin.some((back) => isWithin(root, back)));
    return { ...base, write: temps, writeExceptions: [], readAllowWithin: [...base.readAllowWithin, dir], network };
  }
  return { ...base, write: [], writeExceptions: [], readAllowWithin: [dir], network };
}

/**
 * The call's sandbox policy; in the tiers that run commands on the host (confirm, full), which
 * have none, one that writes only the call's temp (the tool still runs sandboxed or in a
 * container), with the network the checks above allowed.
 */
function basePolicyOf(credential: ReachCredential, env: Readonly<Record<string, string>>): SandboxPolicy {
  if (credential.exec === 'sandbox') return credential.sandboxPolicy();
  const temp = env.TMPDIR === undefined ? [] : [env.TMPDIR];
  return { readDeny: [], readAllowWithin: temp, write: temp, writeDeny: [], writeExceptions: [], controlDeny: [], network: 'on', localPorts: [], unixSockets: [] };
}

/** Why a call for someone who is not an owner runs nothing, as its refusal says. */
function notOwner(name: string, asked: string): string {
  return `tool '${name}' did not run: this call acts for someone who is not an owner, so it has no local effect (nothing runs for it)${asked}.`;
}

/**
 * Refuses, before the approval gate, a call the handler would refuse whatever the owner answered:
 * one for someone who is not an owner. Asked first, the owner could only approve it to see it
 * denied, and each such call by a stranger would be one more card (with the AI reviewer, one
 * more model call).
 */
export function admitSpecTool(ctx: ToolCallContext, loaded: LoadedSpec): void {
  if (credentialOf(ctx).exec === 'none') throw new ToolError('denied', notOwner(loaded.spec.name, '; nobody was asked'));
}

/**
 * Runs one call of a spec tool (after the dispatcher validated its params and passed the
 * high-risk gate): the envelope on stdin, in the tool's profile, one JSON result read back.
 * Any failure is a structured tool error; nothing of its stdout is taken apart for meaning.
 */
export async function runSpecTool(ctx: ToolCallContext, loaded: LoadedSpec, params: unknown, deps: SpecRunDeps): Promise<unknown> {
  const credential = credentialOf(ctx);
  const { spec } = loaded;
  const profile = spec.sandbox.profile;
  if (profile !== 'local') {
    const why = deps.noEngine();
    if (why !== undefined) throw new ToolError('unavailable', `tool '${spec.name}' runs in a container (profile ${profile}) and ${why}; it did not run. Run \`aalis doctor\`.`);
  }
  // admitSpecTool refused it before the gate; the credential made after the gate may differ
  if (credential.exec === 'none') throw new ToolError('denied', notOwner(spec.name, ''));
  const argv = [loaded.program ?? spec.command[0], ...spec.command.slice(1)] as [string, ...string[]];
  // In confirm and full, commands run on the host: a local spec tool is such a command and is asked as one.
  if (profile === 'local' && credential.exec === 'host') await requireOrThrow(credential, { effect: 'exec', host: true, command: { argv, cwd: loaded.dir } });
  if (profile === 'network') await requireOrThrow(credential, { effect: 'network', via: 'command' });
  const who = originatingTurn(ctx.turn).authorised;
  const stdin = encodeToolEnvelope({
    tool: spec.name,
    params: params as Record<string, unknown>,
    call: { id: ctx.callId, session: ctx.turn.session.id, principal: who ? `${who.platform}:${who.userId}` : null },
  });
  const env = await credential.processEnv('sandbox');
  // A container has its own /tmp; the host's session temp is not mounted there.
  if (profile !== 'local') delete env.TMPDIR;
  let result: Awaited<ReturnType<DockerSandbox['run']>>;
  try {
    result = await deps.box.run({
      argv,
      cwd: loaded.dir,
      env,
      timeoutMs: spec.timeout_ms,
      maxOutputBytes: MAX_TOOL_OUTPUT,
      policy: specToolPolicy(basePolicyOf(credential, env), loaded.dir, profile),
      sandboxSpec: spec.sandbox,
      identity: 'restricted',
      stdin,
      signal: ctx.signal,
    });
  } catch (error) {
    if (error instanceof SandboxUnavailableError) throw new ToolError('unavailable', `tool '${spec.name}' did not run: ${error.message}`);
    throw new ToolError('unavailable', `tool '${spec.name}' could not be started, so it did not run: ${(error as Error).message}`);
  }
  const outcome = toolRunOutcome(result);
  if (!outcome.ok) throw new ToolError(KIND_OF[outcome.kind], `tool '${spec.name}' (profile ${profile}): ${outcome.message}`);
  return outcome.value;
}
