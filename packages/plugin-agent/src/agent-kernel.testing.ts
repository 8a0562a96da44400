// A real kernel for the agent's tests: sessions (persisted), authority (owner chat:owner),
// the approval desk answered by a test adapter that replies by code as a chat adapter would,
// reach, the dispatcher, the built-in tools with the real Linux sandbox (bubblewrap), the model
// service pointed at the scripted chat-completions server, and the agent. Only the model is a
// stand-in.
import { sandbox } from '@aalis/api-reach';
import { authorityPlugin, createKernel, definePlugin, type Identity, type Kernel, type KernelEventName, type OriginTurn, sessionsPlugin, toolsPlugin } from '@aalis/core';
import { modelPlugin } from '@aalis/model';
import { type ApprovalDeskService, type ApprovalRequestedEvent, approvalDesk, approvalPlugin } from '@aalis/plugin-approval';
import { reachPlugin } from '@aalis/plugin-reach';
import { builtinToolsPlugin } from '@aalis/plugin-tools';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { agentPlugin } from './agent-plugin.js';
import { AGENT_EVENTS } from './events.js';

/** The owner of the test kernel, and a stranger. */
export const OWNER: Identity = { platform: 'chat', userId: 'owner' };
export const STRANGER: Identity = { platform: 'chat', userId: 'stranger' };

/** What {@link agentKernelOf} builds a kernel from. */
export interface AgentKernelOptions {
  readonly dataDir: string;
  readonly home: string;
  readonly install: string;
  readonly modelURL: string;
  readonly approvalTimeoutMs?: number;
  /** The test adapter: called for every ask, with the desk to answer it on. */
  readonly onAsk: (event: ApprovalRequestedEvent, desk: ApprovalDeskService) => void;
}

/** Every agent event the kernel emitted, in order, as `[name, payload]`. */
export type Seen = [KernelEventName, Record<string, unknown>][];

/** Builds (not starts) the kernel; `seen` collects the agent's events. Add plugins (a reviewer) before starting. */
export function agentKernelOf(options: AgentKernelOptions): { kernel: Kernel; seen: Seen } {
  const seen: Seen = [];
  const kernel = createKernel({ dataDir: options.dataDir })
    .use(sessionsPlugin, { persist: true })
    .use(authorityPlugin, { owners: { chat: ['owner'] } })
    .use(approvalPlugin, { timeoutMs: options.approvalTimeoutMs ?? 5_000 })
    .use(reachPlugin, { install: options.install, form: 'source', userHome: options.home, loginShell: '/bin/sh' })
    .use(toolsPlugin)
    .use(builtinToolsPlugin)
    .use(definePlugin({ name: 'sandbox-linux', provides: [sandbox], apply: (ctx) => ctx.provide(sandbox, createLinuxSandbox()) }))
    .use(modelPlugin, { baseURL: options.modelURL, model: 'scripted', requestTimeoutMs: 5_000 })
    .use(agentPlugin, { maxSteps: 8 })
    .use(
      definePlugin({
        name: 'test-adapter',
        inject: [approvalDesk],
        apply(ctx) {
          const desk = ctx.get(approvalDesk);
          ctx.on('approval/requested', (event) => options.onAsk(event, desk));
          for (const name of [...AGENT_EVENTS, 'approval/requested', 'approval/resolved', 'session/settings-changed'] as const) {
            ctx.on(name, (payload) => seen.push([name, payload as unknown as Record<string, unknown>]));
          }
        },
      }),
    );
  return { kernel, seen };
}

let counter = 0;
/** A person's own turn in `session`. */
export function turnOf(who: Identity, session = 'main'): OriginTurn {
  return { session: { id: session }, platform: 'chat', speaker: who, authorised: who, inbound: { id: `m${++counter}` }, category: 'own' };
}
