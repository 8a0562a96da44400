import type { SessionSettings } from '@aalis/core';

/**
 * The reviews running per (root) conversation, so a person can take a conversation's asks back
 * from the reviewer: when its approver moves away from `reviewer` (to `human`, or `none`), each of
 * its running reviews is handed over. A handed-over review stops asking its model and gives no
 * verdict; the ask stays with the desk for a person's answer (or its expiry), as any ask does.
 */
export class ReviewerHandover {
  readonly #running = new Map<string, Set<AbortController>>();

  /** Tracks one review of `conversation`; its signal aborts when the conversation is handed over. */
  begin(conversation: string): { readonly signal: AbortSignal; end(): void } {
    const controller = new AbortController();
    const set = this.#running.get(conversation) ?? new Set<AbortController>();
    this.#running.set(conversation, set);
    set.add(controller);
    return {
      signal: controller.signal,
      end: () => {
        set.delete(controller);
        if (set.size === 0 && this.#running.get(conversation) === set) this.#running.delete(conversation);
      },
    };
  }

  /** Hands a conversation's running reviews over when its approver stopped being the reviewer. */
  onSettingsChanged(event: { sessionId: string; previous: SessionSettings; next: SessionSettings }): number {
    if (event.previous.approver !== 'reviewer' || event.next.approver === 'reviewer') return 0;
    return this.handOver(event.sessionId, `the conversation's approver was switched to '${event.next.approver}'`);
  }

  /** Aborts every running review of a conversation, saying why. */
  handOver(conversation: string, why: string): number {
    const set = this.#running.get(conversation);
    if (!set) return 0;
    for (const controller of set) controller.abort(new Error(why));
    return set.size;
  }
}
