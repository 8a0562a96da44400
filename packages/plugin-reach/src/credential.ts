import {
  isNeverWritten,
  judgeReach,
  matchesRule,
  NEVER_WRITTEN,
  neverWrittenMessage,
  REACH_CREDENTIAL,
  type Reach,
  type ReachCredential,
  type ReachRequest,
  type ReachVerdict,
  type SandboxPolicy,
  type SecretEnvConfig,
  sandboxPolicyOf,
} from '@aalis/api-reach';
import type { ApprovalService, ApprovalSubject, OriginTurn } from '@aalis/core';
import { hostEnvOf, sandboxEnvOf } from './login-env.js';
import { commandLine, denialMessage, describeAsk, describeRequest, notApprovedMessage } from './messages.js';

/** What a credential is issued from: fixed facts of the call, and how to see its current reach. */
export interface CredentialSource {
  readonly turn: OriginTurn;
  /** Fixed at issue. */
  readonly exec: 'none' | 'sandbox' | 'host';
  /** Fixed at issue; absent without local effect. */
  readonly home?: string;
  readonly sessionTmp: string;
  /** The owner's home, whose caches hold the sandbox's own package stores; `HOME` when absent. */
  readonly userHome?: string;
  /** The reach under the session's settings right now (a downgrade applies at once). */
  current(): Reach;
  approval(): ApprovalService | undefined;
  /** The owner's login-shell environment. */
  ownerEnv(): Promise<Readonly<Record<string, string>>>;
  /** What the config allows through (and adds to) the sandbox's environment filter. */
  readonly secretEnv: SecretEnvConfig;
  /** The docker deployment's directory of person spaces, so a refusal there says whose files they are. */
  readonly personSpaces?: string;
}

/**
 * The sandbox policy of a reach with no grants, by reach: a reach is frozen and made once per
 * binding and settings (reach-cache.ts), and `sandboxPolicyOf` is pure, so the policy is too.
 */
const ungrantedPolicies = new WeakMap<Reach, SandboxPolicy>();

/** A copy of plain data, frozen at every level. */
function frozenCopy<T>(value: T): T {
  const copy = structuredClone(value);
  const freeze = (inner: unknown): void => {
    if (typeof inner !== 'object' || inner === null) return;
    for (const child of Object.values(inner)) freeze(child);
    Object.freeze(inner);
  };
  freeze(copy);
  return copy;
}

/** What this call has had approved, once. */
interface CallGrants {
  readonly writePaths: Set<string>;
  readonly landingPaths: Set<string>;
  readonly workflows: Set<string>;
  network: boolean;
  hostExec: boolean;
}

/**
 * Issues one call's credential. The only place a credential is built: the brand is an own,
 * non-enumerable, read-only property, so a copy of the object is no credential.
 */
export function issueCredential(source: CredentialSource): ReachCredential {
  const grants: CallGrants = { writePaths: new Set(), landingPaths: new Set(), workflows: new Set(), network: false, hostExec: false };

  const granted = (request: ReachRequest, reach: Reach): boolean => {
    if (reach.exec === 'none') return false;
    switch (request.effect) {
      case 'write': {
        if (!('path' in request)) return grants.workflows.has(request.workflow);
        if (grants.landingPaths.has(request.path)) return true;
        const decision = judgeReach(reach, request);
        if (decision.verdict !== 'ask' || decision.reason.kind === 'landing') return false;
        return [...grants.writePaths].some((root) => matchesRule({ path: root }, request.path, reach.lists.platform));
      }
      case 'exec':
        return request.host && grants.hostExec;
      case 'network':
        return grants.network;
      case 'read':
        return false;
    }
  };

  // .env/.pem/.key are never written in the sandboxed tiers, whatever is approved; on the host (confirm, full) the owner's word stands.
  const secretWrite = (request: ReachRequest): request is ReachRequest & { path: string } => {
    if (source.exec === 'host' || request.effect !== 'write' || !('path' in request)) return false;
    const reach = source.current();
    return reach.exec !== 'none' && isNeverWritten(request.path, reach.lists.platform);
  };

  const credential = {
    exec: source.exec,
    ...(source.home !== undefined ? { home: source.home } : {}),

    async require(request: ReachRequest): Promise<ReachVerdict> {
      // Here, not in each tool: every tool that writes through a credential meets it, a plugin's too.
      if (secretWrite(request)) return { allowed: false, message: neverWrittenMessage(request.path) };
      const reach = source.current();
      const decision = judgeReach(reach, request);
      if (decision.verdict === 'allow') return { allowed: true };
      const tier = reach.exec === 'none' ? 'none' : reach.tier;
      if (decision.verdict === 'deny') return { allowed: false, message: denialMessage(request, decision, tier, source.personSpaces) };
      if (granted(request, reach)) return { allowed: true };
      const gate = source.approval();
      if (!gate) return { allowed: false, message: notApprovedMessage(request, decision.reason, { outcome: 'unavailable' }) };
      // A host command in confirm is asked every time (docs/reach-contract.md, the tier table); elsewhere one is remembered only by
      // its exact argv and cwd, and one the caller did not name is never remembered.
      const everyTime = request.effect === 'exec' && (decision.reason.kind === 'tier' || request.command === undefined);
      const remember = request.effect !== 'exec' ? '' : everyTime ? ' (asked every time; it cannot be remembered)' : ' ("remember" covers exactly this command in this directory)';
      const outcome = await gate.ask({
        turn: source.turn,
        subject: subjectOf(request, decision.reason),
        summary: `${describeRequest(request)}: asked because ${describeAsk(decision.reason)}${remember}`,
        rememberable: !everyTime,
      });
      if (outcome.outcome !== 'approved') return { allowed: false, message: notApprovedMessage(request, decision.reason, outcome) };
      record(grants, request, decision.reason.kind === 'landing');
      return { allowed: true };
    },

    allows(effect: 'read' | 'write', realPath: string): boolean {
      const reach = source.current();
      const request: ReachRequest = { effect, path: realPath };
      if (secretWrite(request)) return false;
      const decision = judgeReach(reach, request);
      if (decision.verdict === 'allow') return true;
      if (decision.verdict === 'deny') return false;
      return granted(request, reach);
    },

    sandboxPolicy(): SandboxPolicy {
      if (source.exec !== 'sandbox') {
        throw new Error(`this call's commands run ${source.exec === 'host' ? 'on the host' : 'nowhere (no local effect)'}, so it has no sandbox policy.`);
      }
      const reach = source.current();
      const ungranted = grants.writePaths.size === 0 && grants.landingPaths.size === 0 && !grants.network;
      // Most calls are granted nothing: their policy is the reach's own, built once per reach.
      const known = ungranted ? ungrantedPolicies.get(reach) : undefined;
      if (known !== undefined) return known;
      const policy = sandboxPolicyOf(reach, {
        writePaths: [...grants.writePaths],
        landingPaths: [...grants.landingPaths],
        network: grants.network,
      });
      const whole = { ...policy, controlDeny: [...policy.controlDeny, ...NEVER_WRITTEN] };
      if (!ungranted) return whole;
      // a frozen copy, all the way down: a backend checks a policy that cannot change once (api-reach's parseRunRequest)
      const kept = frozenCopy(whole);
      ungrantedPolicies.set(reach, kept);
      return kept;
    },

    async processEnv(mode: 'sandbox' | 'host'): Promise<Record<string, string>> {
      if (source.exec === 'none') {
        throw new Error('this call has no local effect (it acts for someone who is not the owner), so it has no process environment: nothing may run for it.');
      }
      const owner = await source.ownerEnv();
      return mode === 'host' ? hostEnvOf(owner) : sandboxEnvOf(owner, source.sessionTmp, source.secretEnv, source.userHome);
    },
  };
  Object.defineProperty(credential, REACH_CREDENTIAL, { value: true, enumerable: false, writable: false, configurable: false });
  return Object.freeze(credential) as unknown as ReachCredential;
}

function record(grants: CallGrants, request: ReachRequest, landing: boolean): void {
  switch (request.effect) {
    case 'write':
      if (!('path' in request)) grants.workflows.add(request.workflow);
      else if (landing) grants.landingPaths.add(request.path);
      else grants.writePaths.add(request.path);
      return;
    case 'exec':
      if (request.host) grants.hostExec = true;
      return;
    case 'network':
      grants.network = true;
      return;
    case 'read':
      return;
  }
}

function subjectOf(request: ReachRequest, reason: { kind: 'tier' } | { kind: 'landing' } | { kind: 'boundary' }): ApprovalSubject {
  const rule = reason.kind === 'tier' ? 'tier' : 'boundary';
  switch (request.effect) {
    case 'write':
      return 'path' in request
        ? { kind: 'write-path', path: request.path, ...(request.toMake !== undefined ? { toMake: request.toMake } : {}), rule: reason.kind === 'landing' ? 'landing' : rule }
        : { kind: 'workflow', workflow: request.workflow, rule };
    case 'exec':
      return request.command
        ? {
            kind: 'host-exec',
            command: commandLine(request.command.argv),
            argv: [...request.command.argv],
            cwd: request.command.cwd,
            ...(request.command.stdin !== undefined ? { stdin: request.command.stdin } : {}),
            rule,
          }
        : { kind: 'host-exec', command: 'a command outside the sandbox (not named by the caller)', rule };
    case 'network':
      return { kind: 'network', via: request.via, rule };
    case 'read':
      return { kind: 'write-path', path: request.path, rule };
  }
}
