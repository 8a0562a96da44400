import { AalisError, type SessionSettings } from '@aalis/core';

/** Why a review was handed over: the conversation's new approver. */
export class HandedOver extends AalisError<'handed-over'> {
  constructor(readonly to: 'human' | 'none') {
    super('handed-over', `the conversation's approver was switched to '${to}' while the reviewer was asked`);
  }
}

/**
 * The reviews running per (root) conversation, so a person can take a conversation's asks back
 * from the reviewer: when its approver moves away from `reviewer`, each of its running reviews is
 * handed over (its signal aborts with {@link HandedOver}). To `human`: the review stops asking
 * its model and gives no verdict, so the ask stays with the desk for a person's answer (or its
 * expiry). To `none`: the review fails, which the desk turns into a refusal, as `none` refuses.
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
    return this.handOver(event.sessionId, event.next.approver);
  }

  /** Aborts every running review of a conversation with the approver it moved to. */
  handOver(conversation: string, to: 'human' | 'none'): number {
    const set = this.#running.get(conversation);
    if (!set) return 0;
    for (const controller of set) controller.abort(new HandedOver(to));
    return set.size;
  }
}
