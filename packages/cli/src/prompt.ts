import { definePlugin, type Identity } from '@aalis/core';
import { type ApprovalRequestedEvent, approvalDesk } from '@aalis/plugin-approval';
import { askText } from './ask-text.js';
import type { CliIo } from './io.js';
import { forTerminal, forTerminalLine } from './terminal-text.js';

const CHOICES: Record<string, 'approve' | 'approve-remember' | 'reject'> = {
  o: 'approve',
  once: 'approve',
  y: 'approve',
  r: 'approve-remember',
  remember: 'approve-remember',
  n: 'reject',
  no: 'reject',
  reject: 'reject',
};

/**
 * Answers approvals at the terminal: what is asked, why, and the choice of approving once,
 * remembering for this session, or rejecting. Without a terminal every ask is rejected with
 * that reason, so nothing is approved by accident.
 */
export function terminalApprover(io: CliIo, who: Identity) {
  return definePlugin({
    name: 'terminal-approver',
    inject: [approvalDesk],
    apply(ctx) {
      const desk = ctx.get(approvalDesk);
      let queue = Promise.resolve();
      ctx.on('approval/requested', (event: ApprovalRequestedEvent) => {
        queue = queue.then(() => answer(event)).catch((error: unknown) => io.stderr(`aalis: could not answer approval ${event.code}: ${String(error)}\n`));
      });
      async function answer(event: ApprovalRequestedEvent): Promise<void> {
        io.stderr(`\naalis: approval needed (code ${event.code})\n  ${forTerminalLine(event.summary)}\n${askText(event.subject)}`);
        if (!io.ask) {
          io.stderr('  no terminal to ask on: rejected. Run in a terminal to be asked, or widen the reach (--tier, --allow-write).\n');
          await desk.reply({ code: event.code, decision: 'reject', by: who, reason: 'no terminal to ask on' });
          return;
        }
        for (;;) {
          const options = event.rememberable ? '[o] approve once  [r] remember for this session  [n] reject' : '[o] approve once  [n] reject';
          const raw = await io.ask(`  ${options} > `);
          if (raw === undefined) {
            await desk.reply({ code: event.code, decision: 'reject', by: who, reason: 'the terminal closed before an answer' });
            return;
          }
          const decision = CHOICES[raw.trim().toLowerCase()];
          if (decision === undefined || (decision === 'approve-remember' && !event.rememberable)) {
            io.stderr(`  '${raw.trim()}' is not a choice here.\n`);
            continue;
          }
          const result = await desk.reply({ code: event.code, decision, by: who, ...(decision === 'reject' ? { reason: 'rejected at the terminal' } : {}) });
          io.stderr(`  ${forTerminal(result.message)}\n`);
          return;
        }
      }
    },
  });
}
