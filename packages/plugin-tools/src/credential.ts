import { isReachCredential, type ReachCredential } from '@aalis/api-reach';
import { type ToolCallContext, ToolError } from '@aalis/core';

declare module '@aalis/core' {
  interface ToolCallExtensions {
    /** This call's reach credential, issued by the reach service for the call's turn. */
    credential: ReachCredential;
  }
}

/** The call's credential; a call without one (or with a look-alike) is refused, never run. */
export function credentialOf(ctx: ToolCallContext): ReachCredential {
  const credential = ctx.credential;
  if (!isReachCredential(credential)) {
    throw new ToolError('denied', `tool '${ctx.tool}' got no reach credential for this call, so it touches nothing. Start the reach plugin with the tools plugin.`);
  }
  return credential;
}

/** Runs `require` and turns a refusal into a structured tool error carrying its message. */
export async function requireOrThrow(credential: ReachCredential, request: Parameters<ReachCredential['require']>[0]): Promise<void> {
  const verdict = await credential.require(request);
  if (!verdict.allowed) throw new ToolError('denied', verdict.message);
}
