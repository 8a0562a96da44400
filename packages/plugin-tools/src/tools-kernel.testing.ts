// A real kernel with the file tools, for the safe-writes tests and their killed child: sessions,
// authority, the approval plugin answered by a test adapter that rejects every ask, the reach
// plugin and the dispatcher. Nothing is mocked; there is no sandbox (the file tools need none).
import { join } from 'node:path';
import { sandbox } from '@aalis/api-reach';
import { type AccessTier, authorityPlugin, createKernel, definePlugin, type Kernel, type OriginTurn, sessions, sessionsPlugin, type ToolOutcome, tools, toolsPlugin } from '@aalis/core';
import { type ApprovalDeskService, type ApprovalRequestedEvent, approvalDesk, approvalPlugin } from '@aalis/plugin-approval';
import { reachBindings, reachPlugin } from '@aalis/plugin-reach';
import { createLinuxSandbox, type LinuxSandboxOptions } from '@aalis/sandbox-linux';
import { builtinToolsPlugin } from './plugin.js';

/** What {@link toolsKernelOf} builds a kernel from. */
export interface ToolsKernelOptions {
  readonly dataDir: string;
  readonly home: string;
  readonly install: string;
  /** How long an ask waits for its answer. */
  readonly approvalTimeoutMs: number;
  /** Whether `run_command` gets the real Linux sandbox (bubblewrap); options for it, when given. */
  readonly linuxSandbox?: boolean | LinuxSandboxOptions;
  /** The owners (default `chat:owner`). */
  readonly owners?: Record<string, string[]>;
  /** The docker deployment's directory of person spaces, given to the reach plugin. */
  readonly personSpaces?: string;
  /** The test adapter: called for every ask, with the desk to answer it on. */
  readonly onAsk: (event: ApprovalRequestedEvent, desk: ApprovalDeskService) => void;
}

/**
 * The kernel every plugin-tools test runs through, not yet started: sessions, authority (owner
 * `chat:owner`), the approval desk answered by `onAsk`, the reach plugin, the dispatcher and the
 * built-in tools; the real Linux sandbox when asked for. Add plugins (a reviewer) before starting it.
 */
export function toolsKernelOf(options: ToolsKernelOptions): Kernel {
  const kernel = createKernel({ dataDir: options.dataDir })
    .use(sessionsPlugin, { persist: false })
    .use(authorityPlugin, { owners: options.owners ?? { chat: ['owner'] } })
    .use(approvalPlugin, { timeoutMs: options.approvalTimeoutMs })
    .use(reachPlugin, { install: options.install, form: 'source', userHome: options.home, loginShell: '/bin/sh', ...(options.personSpaces !== undefined ? { personSpaces: options.personSpaces } : {}) })
    .use(toolsPlugin)
    .use(builtinToolsPlugin);
  const linux = options.linuxSandbox;
  if (linux) kernel.use(definePlugin({ name: 'sandbox-linux', provides: [sandbox], apply: (ctx) => ctx.provide(sandbox, createLinuxSandbox(linux === true ? {} : linux)) }));
  return kernel.use(
    definePlugin({
      name: 'test-adapter',
      inject: [approvalDesk],
      apply(ctx) {
        const desk = ctx.get(approvalDesk);
        ctx.on('approval/requested', (event) => options.onAsk(event, desk));
      },
    }),
  );
}

/** A running kernel and a way to call a tool as its owner. */
export interface ToolsKernel {
  readonly kernel: Kernel;
  call(tool: string, params: unknown): Promise<ToolOutcome>;
}

let counter = 0;

/** Starts a kernel whose session `main` is bound to `project` at `tier`; every ask is rejected. */
export async function startToolsKernel(options: { dataDir: string; home: string; project: string; install: string; tier: AccessTier }): Promise<ToolsKernel> {
  const owner = { platform: 'chat', userId: 'owner' };
  const kernel = toolsKernelOf({
    dataDir: options.dataDir,
    home: options.home,
    install: options.install,
    approvalTimeoutMs: 1500,
    onAsk: (event, desk) => void desk.reply({ code: event.code, decision: 'reject', by: owner }),
  });
  const status = await kernel.start();
  const failed = status.filter((s) => s.state !== 'running');
  if (failed.length > 0) throw new Error(`plugins did not start: ${JSON.stringify(failed)}`);
  kernel.get(reachBindings).bind('main', { home: options.project });
  await kernel.get(sessions).change('main', { tier: options.tier, boundary: 'ask' });
  const turn = (): OriginTurn => ({ session: { id: 'main' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: `m${++counter}` }, category: 'own' });
  return { kernel, call: (tool, params) => kernel.get(tools).dispatch({ tool, params, turn: turn() }) };
}

/** The install directory the tests give the reach plugin, under `root`. */
export const installOf = (root: string): string => join(root, 'install');
