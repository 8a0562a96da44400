// The kernel run_command's tests run through: the real approval desk (answered by a test adapter
// by code), the reach plugin, the dispatcher and the real Linux sandbox (bubblewrap). Nothing is
// mocked. Each test file that imports this gets its own root under the tests' scratch folder (outside /tmp).
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { type AccessTier, type OriginTurn, sessions, type ToolOutcome, tools } from '@aalis/core';
import type { ApprovalRequestedEvent } from '@aalis/plugin-approval';
import { reachBindings } from '@aalis/plugin-reach';
import { afterAll } from 'vitest';
import type { RunCommandResult } from './run-command.js';
import { toolsKernelOf } from './tools-kernel.testing.js';

// Not under /tmp: the sandbox has a private /tmp, so a host path there is not what it sees.
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-run-command-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
/** A directory outside every root of the reach. */
export const outside = join(root, 'outside');
mkdirSync(outside, { recursive: true });

/** The owner (chat:owner), who answers every ask. */
export const owner = { platform: 'chat', userId: 'owner' };
let counter = 0;
const turn = (): OriginTurn => ({ session: { id: 'main' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: `m${++counter}` }, category: 'own' });

/** What the test adapter replies, tried in order until one is taken. */
export type Decision = 'approve' | 'approve-remember' | 'reject';

/** A kernel whose adapter answers every ask with `answer(event)`; each project is a fresh directory. */
export async function start(tier: AccessTier) {
  const project = join(home, `project-${++counter}`);
  mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
  const asked: ApprovalRequestedEvent[] = [];
  const replies: { ok: boolean; refused?: string }[] = [];
  let answer: (event: ApprovalRequestedEvent) => Decision[] = () => ['reject'];
  const kernel = toolsKernelOf({
    dataDir: mkdtempSync(join(root, 'data-')),
    home,
    install: join(root, 'install'),
    approvalTimeoutMs: 3000,
    linuxSandbox: true,
    onAsk: (event, desk) => {
      asked.push(event);
      void (async () => {
        // Tries each decision in turn until one is taken (a refused remember, then approve).
        for (const decision of answer(event)) {
          const reply = await desk.reply({ code: event.code, decision, by: owner });
          replies.push(reply);
          if (reply.ok) return;
        }
      })();
    },
  });
  await kernel.start();
  kernel.get(reachBindings).bind('main', { home: project });
  await kernel.get(sessions).change('main', { tier, boundary: 'ask' });
  return {
    kernel,
    project,
    asked,
    replies,
    answer: (fn: (event: ApprovalRequestedEvent) => Decision[]) => {
      answer = fn;
    },
    run: async (params: Record<string, unknown>, signal?: AbortSignal) =>
      (await kernel.get(tools).dispatch({ tool: 'run_command', params, turn: turn(), ...(signal ? { signal } : {}) })) as ToolOutcome<RunCommandResult>,
  };
}

/** How many `run` lines the project's count.txt holds: how many times the command ran. */
export const countIn = (project: string) => readFileSync(join(project, 'count.txt'), 'utf8').split('\n').filter((l) => l === 'run').length;
