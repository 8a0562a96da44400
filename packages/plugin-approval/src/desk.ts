import { randomUUID } from 'node:crypto';
import { type ApprovalOutcome, type ApprovalRequest, type AuthorityService, type DurableStore, type Identity, type KernelEventPayload, originatingTurn, type Sessions } from '@aalis/core';
import { describeError, escapeInvisible } from '@aalis/core';
import { AuditLog, type AuditRotation } from './audit.js';
import { currentCallSignal } from './call-scope.js';
import { parseCode } from './code.js';
import type { ResolutionSource } from './events.js';
import { type Grant, GrantBook } from './grants.js';
import type { ApprovalDeskService, PendingView, RevokeResult } from './desk-service.js';
import { describeOutcome, describeSettled, NOTHING_DONE, policyReject } from './messages.js';
import { type PendingEntry, PendingTable } from './pending.js';
import { type ReplyResult, ReplyRequestSchema } from './reply.js';
import { type ApprovalReviewer, ReviewVerdictSchema } from './reviewer.js';
import { ApprovalRequestSchema, type GrantScope, sameScope, scopeOf, scopeSessionOf } from './subject.js';
import { turnSummaryOf } from './turn-summary.js';

/** What an {@link ApprovalDesk} needs. */
export interface DeskOptions {
  readonly store: DurableStore;
  readonly sessions: Pick<Sessions, 'settings'>;
  readonly authority: AuthorityService;
  readonly reviewer: () => ApprovalReviewer | undefined;
  /** Where the desk's events go (the plugin passes `ctx.emit`). */
  readonly emit: <E extends 'approval/requested' | 'approval/resolved'>(event: E, payload: KernelEventPayload<E>) => void;
  readonly timeoutMs: number;
  readonly codeLength: number;
  /** Told about faults that have no caller to answer (a pending-document write that failed). */
  readonly warn?: (message: string) => void;
  readonly now?: () => number;
  /** When the audit log rotates (default: 64 MiB or 30 days). */
  readonly auditRotation?: AuditRotation;
  /**
   * Each person's asks and grants are theirs alone (the docker deployment): being an owner is not
   * enough to answer another person's ask or revoke their grant; only `admins` may.
   */
  readonly persons?: { readonly admins: readonly Identity[] };
}

/** Whether two identities are the same person (both fields, compared exactly). */
function samePerson(a: Identity, b: Identity): boolean {
  return a.platform === b.platform && a.userId === b.userId;
}

/** The answer for an ask whose call ended before anybody answered. */
function cancelled(call: AbortSignal): ApprovalOutcome {
  return policyReject(`the tool call that asked ended before an answer (${describeError(call.reason)}); ${NOTHING_DONE}, and nothing will be done for it later. Ask again in a new call.`);
}

/** `reason`: why an approval was given (the reviewer's), for the audit log; a rejection carries its own. */
type Answer = { readonly outcome: ApprovalOutcome; readonly via: ResolutionSource; readonly remember?: boolean; readonly reason?: string };

/** The approval gate: asks, codes, replies, the reviewer, grants and the audit log. */
export class ApprovalDesk implements ApprovalDeskService {
  readonly #table: PendingTable;
  readonly #audit: AuditLog;
  readonly #now: () => number;
  readonly #warn: (message: string) => void;
  #stopped = false;

  private constructor(
    private readonly options: DeskOptions,
    private readonly book: GrantBook,
  ) {
    this.#now = options.now ?? Date.now;
    this.#warn = options.warn ?? ((message) => process.emitWarning(message));
    this.#audit = new AuditLog(options.store, { now: this.#now, warn: this.#warn, ...(options.auditRotation ? { rotation: options.auditRotation } : {}) });
    this.#table = new PendingTable(options.codeLength);
  }

  /** Opens the desk; asks a previous run left pending are audited and announced as expired first. */
  static async open(options: DeskOptions): Promise<ApprovalDesk> {
    const desk = new ApprovalDesk(options, await GrantBook.open(options.store));
    await desk.#recover();
    return desk;
  }

  readonly grants = {
    list: (session?: string): readonly Grant[] => this.book.list(session),
    revoke: (id: string, by: Identity): Promise<RevokeResult> => this.#revoke(id, by),
  };

  async ask(input: ApprovalRequest): Promise<ApprovalOutcome> {
    if (this.#stopped) return policyReject(`the approval service is stopping; ${NOTHING_DONE}. Ask again after the daemon restarts.`);
    const parsed = ApprovalRequestSchema.safeParse(input);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`).join('; ');
      return policyReject(`the approval request was malformed (${issues}); ${NOTHING_DONE}.`);
    }
    try {
      // Whoever built the summary, what the owner (the event, the pending list, the audit) and the
      // reviewer read shows bidi overrides and line separators escaped, not applied.
      return await this.#ask({ ...input, summary: escapeInvisible(input.summary) }, currentCallSignal());
    } catch (error) {
      return policyReject(`the approval service failed (${describeError(error)}); ${NOTHING_DONE}.`);
    }
  }

  async reply(input: unknown): Promise<ReplyResult> {
    const parsed = ReplyRequestSchema.safeParse(input);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(reply)'}: ${i.message}`).join('; ');
      return { ok: false, refused: 'invalid', message: `the reply was not understood (${issues}); nothing was answered.` };
    }
    const reply = parsed.data;
    const code = parseCode(reply.code);
    if (!code.ok) return { ok: false, refused: 'invalid', message: code.message };
    if (this.#stopped) return { ok: false, refused: 'stopped', message: 'the approval service is stopping; its pending asks have expired.' };

    // From the lookup to the claim nothing awaits, so no other answer can come in between.
    const entry = this.#table.byCode(code.code);
    if (!entry) {
      const settled = this.#table.recent(code.code);
      if (settled) return { ok: false, refused: 'already-answered', id: settled.id, message: `approval ${code.code} was already answered: ${describeSettled(settled)}. This reply changed nothing.` };
      return { ok: false, refused: 'unknown-code', message: `no approval is waiting with code ${code.code}; check the code in the request (it may have expired long ago).` };
    }
    if (entry.state !== 'pending') {
      return { ok: false, refused: 'already-answered', id: entry.id, message: `approval ${code.code} is already being answered (by another reply, the reviewer or its expiry); this reply changed nothing.` };
    }
    if (!this.options.authority.isOwner(reply.by)) {
      const message = `only the owner may answer approvals; ${reply.by.platform}:${reply.by.userId} is not an owner. Approval ${code.code} stays open for the owner.`;
      await this.#auditRefusal(entry.id, entry.session, code.code, reply.by, 'not-owner', message);
      return { ok: false, refused: 'not-owner', id: entry.id, message };
    }
    const raisedBy = originatingTurn(entry.request.turn).authorised;
    if (!this.#mayActFor(reply.by, raisedBy)) {
      const whose = raisedBy === null ? 'nobody authenticated' : `${raisedBy.platform}:${raisedBy.userId}`;
      const message = `approval ${code.code} was raised for ${whose}, and in this deployment each person answers only their own asks; ${reply.by.platform}:${reply.by.userId} is another person. It stays open for them (or an admin).`;
      await this.#auditRefusal(entry.id, entry.session, code.code, reply.by, 'not-theirs', message);
      return { ok: false, refused: 'not-theirs', id: entry.id, message };
    }
    const remember = reply.decision === 'approve-remember';
    if (remember && !(entry.request.rememberable && scopeOf(entry.request.subject))) {
      const message = `approval ${code.code} cannot be remembered: it ${entry.request.subject.kind === 'plan' ? 'is a plan, approved once by its nature' : 'touches the control plane or a rule that is asked every time'}. Reply approve to allow it once, or reject. It stays open.`;
      await this.#auditRefusal(entry.id, entry.session, code.code, reply.by, 'not-rememberable', message);
      return { ok: false, refused: 'not-rememberable', id: entry.id, message };
    }
    if (!this.#table.claim(entry)) {
      return { ok: false, refused: 'already-answered', id: entry.id, message: `approval ${code.code} was answered at the same moment by something else; this reply changed nothing.` };
    }
    const outcome: ApprovalOutcome =
      reply.decision === 'reject'
        ? { outcome: 'rejected', by: reply.by, reason: reply.reason ?? 'the owner rejected it' }
        : { outcome: 'approved', by: reply.by, remembered: remember };
    const { final, grantId, note } = await this.#finish(entry, { outcome, via: 'human', remember });
    return {
      ok: true,
      id: entry.id,
      code: entry.code,
      outcome: final,
      ...(grantId !== undefined ? { grantId } : {}),
      message: `approval ${entry.code}: ${note ?? describeOutcome(final)}.`,
    };
  }

  pending(session?: string): readonly PendingView[] {
    return this.#table
      .entries()
      .filter((e) => e.state === 'pending' && (session === undefined || e.session === session))
      .map((e) => ({
        id: e.id,
        code: e.code,
        session: e.session,
        summary: e.request.summary,
        subject: e.request.subject,
        raisedBy: originatingTurn(e.request.turn).authorised,
        rememberable: e.request.rememberable,
        approver: e.approver,
        createdAt: e.createdAt,
        expiresAt: e.expiresAt,
      }));
  }

  /** Ends every pending ask as expired (audited, via `shutdown`) and refuses new ones. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const now = this.#now();
    const ending = this.#table
      .entries()
      .filter((entry) => this.#table.claim(entry))
      .map((entry) => this.#finish(entry, { outcome: { outcome: 'expired', afterMs: now - entry.createdAt }, via: 'shutdown' }));
    await Promise.all(ending);
    // So the next start reads none of this run's lines.
    await this.#audit.upkeep().catch((error) => this.#warn(`approval: the audit log's index could not be written at stop (${describeError(error)}); the next start reads more of the log.`));
  }

  async #ask(request: ApprovalRequest, call: AbortSignal | undefined): Promise<ApprovalOutcome> {
    const id = `apr-${randomUUID()}`;
    const session = scopeSessionOf(request);
    if (call?.aborted) return this.#answerAtOnce(id, request, { outcome: cancelled(call), via: 'cancelled' });
    // A child session's turn answers to its root conversation's approver, as its grants do.
    const { approver } = await this.options.sessions.settings(session);

    if (approver === 'none') {
      const reason = `nobody answers asks in this conversation: its approver is set to 'none', so every ask is refused and ${NOTHING_DONE}. To be asked instead, change the conversation's approver setting to 'human' (or 'reviewer').`;
      return this.#answerAtOnce(id, request, { outcome: policyReject(reason), via: 'policy' });
    }
    const scope = scopeOf(request.subject);
    if (request.rememberable && scope && this.options.authority.principalOf(request.turn) === 'owner') {
      const grant = this.book.find(session, scope);
      if (grant) return this.#answerAtOnce(id, request, { outcome: { outcome: 'approved', by: grant.grantedBy, remembered: true }, via: 'grant' }, grant.id);
    }
    const reviewer = approver === 'reviewer' ? this.options.reviewer() : undefined;
    if (approver === 'reviewer' && !reviewer) {
      const reason = `the conversation's approver is 'reviewer' but no reviewer is running (no plugin provides 'approval-reviewer'); ${NOTHING_DONE}. Set the approver to 'human', or add a reviewer plugin.`;
      return this.#answerAtOnce(id, request, { outcome: policyReject(reason), via: 'policy' });
    }
    const code = this.#table.freshCode();
    if (code === undefined) {
      return this.#answerAtOnce(id, request, { outcome: policyReject(`no free approval code could be found (${this.#table.size} asks are pending); ${NOTHING_DONE}. Answer or let some expire, or raise codeLength.`), via: 'error' });
    }

    let resolve!: (outcome: ApprovalOutcome) => void;
    const answered = new Promise<ApprovalOutcome>((r) => {
      resolve = r;
    });
    const entry: PendingEntry = {
      id,
      code,
      request,
      session,
      approver,
      createdAt: this.#now(),
      expiresAt: undefined,
      state: 'pending',
      timer: undefined,
      abort: new AbortController(),
      resolve,
    };
    this.#table.add(entry);
    // The `requested` line is the durable record of the pending ask: the ask is shown only once
    // it is on disk. It is appended before any await, so it precedes this ask's `resolved` line.
    const recorded = this.#audit.append({
        event: 'requested',
        id,
        code,
        session,
        turn: turnSummaryOf(request.turn),
        subject: request.subject,
        summary: request.summary,
        rule: request.subject.rule,
        approver,
        rememberable: request.rememberable,
        timeoutMs: this.options.timeoutMs,
      });
    // The call that asked ended (its caller hung up, the daemon stops): so does the ask, and
    // nothing it would have allowed is done later. Wired after the `requested` line is queued,
    // so a cancellation's `resolved` line always follows it.
    const onCallEnd = () => {
      if (call && this.#table.claim(entry)) void this.#finish(entry, { outcome: cancelled(call), via: 'cancelled' });
    };
    if (call?.aborted) onCallEnd();
    call?.addEventListener('abort', onCallEnd, { once: true });
    void answered.then(() => call?.removeEventListener('abort', onCallEnd));
    try {
      await recorded;
    } catch (error) {
      if (this.#table.claim(entry)) {
        await this.#finish(entry, { outcome: policyReject(`the ask could not be recorded (${describeError(error)}); ${NOTHING_DONE}.`), via: 'error' });
      }
      return answered;
    }
    if (entry.state === 'pending') this.#show(entry, reviewer);
    return answered;
  }

  #show(entry: PendingEntry, reviewer: ApprovalReviewer | undefined): void {
    const shownAt = this.#now();
    entry.expiresAt = shownAt + this.options.timeoutMs;
    entry.timer = setTimeout(() => {
      if (this.#table.claim(entry)) void this.#finish(entry, { outcome: { outcome: 'expired', afterMs: this.#now() - shownAt }, via: 'timeout' });
    }, this.options.timeoutMs);
    entry.timer.unref?.();
    const { turn, subject, summary, rememberable } = entry.request;
    this.options.emit('approval/requested', {
      id: entry.id,
      code: entry.code,
      session: turn.session,
      platform: turn.platform,
      speaker: turn.speaker,
      inbound: turn.inbound,
      subject,
      summary,
      rememberable,
      approver: entry.approver,
      createdAt: entry.createdAt,
      expiresAt: entry.expiresAt,
    });
    if (reviewer) void this.#review(entry, reviewer);
  }

  async #review(entry: PendingEntry, reviewer: ApprovalReviewer): Promise<void> {
    let answer: Answer;
    try {
      const { turn, subject, summary } = entry.request;
      const raw: unknown = await reviewer.review({ id: entry.id, turn, subject, summary, signal: entry.abort.signal });
      const verdict = ReviewVerdictSchema.safeParse(raw);
      if (!verdict.success) {
        answer = { outcome: policyReject(`the reviewer answered something that is not a verdict (${verdict.error.issues.map((i) => `${i.path.join('.') || '(verdict)'}: ${i.message}`).join('; ')}); ${NOTHING_DONE}.`), via: 'error' };
      } else if (verdict.data.decision === 'allow') {
        answer = { outcome: { outcome: 'approved', by: 'reviewer', remembered: false }, via: 'reviewer', reason: verdict.data.reason };
      } else {
        answer = { outcome: { outcome: 'rejected', by: 'reviewer', reason: verdict.data.reason }, via: 'reviewer' };
      }
    } catch (error) {
      answer = { outcome: policyReject(`the reviewer failed (${describeError(error)}); ${NOTHING_DONE}. Set the approver to 'human' to answer asks yourself.`), via: 'error' };
    }
    // A person who answered first, or the expiry, has already claimed it: the verdict is dropped.
    if (this.#table.claim(entry)) await this.#finish(entry, answer);
  }

  /**
   * Ends a claimed entry: audit line, then grant, release, then the caller's answer and the
   * event. The `resolved` line (naming the grant) is on disk before the grant is written: a
   * crash in between leaves an audited grant that was never saved, which a restart records as
   * dropped, never a grant the audit log does not show.
   */
  async #finish(entry: PendingEntry, answer: Answer): Promise<{ final: ApprovalOutcome; grantId?: string; note?: string }> {
    entry.abort.abort();
    let final = answer.outcome;
    let note: string | undefined;
    const scope = scopeOf(entry.request.subject);
    const by = final.outcome === 'approved' ? final.by : undefined;
    const remembering = answer.remember === true && typeof by === 'object' && scope !== undefined;
    // A grant already covering this scope answers for it; it is never written again (a revocation
    // that comes in meanwhile must win), so only a fresh grant is added below.
    const existing = remembering ? this.book.find(entry.session, scope) : undefined;
    let grantId = remembering ? (existing?.id ?? GrantBook.newId()) : undefined;
    try {
      await this.#auditResolved(entry.id, entry.code, entry.request, final, answer.via, grantId, answer.reason);
    } catch (error) {
      grantId = undefined;
      if (final.outcome === 'approved') final = policyReject(`the answer could not be written to the audit log (${describeError(error)}); ${NOTHING_DONE}.`);
      this.#warn(`approval ${entry.id}: audit write failed: ${describeError(error)}`);
    }
    if (grantId !== undefined && existing === undefined && typeof by === 'object' && scope !== undefined && final.outcome === 'approved') {
      try {
        const grant = await this.book.add({ id: grantId, session: entry.session, scope, subject: entry.request.subject, grantedBy: by, approvalId: entry.id }, this.#now());
        // Another answer remembered the same scope at the same moment: its grant stands, this id never will.
        if (grant.id !== grantId) await this.#dropInAudit(grantId, entry.session, scope, `grant ${grant.id} already covers the same scope`);
        grantId = grant.id;
      } catch (error) {
        note = `approved once; it could not be remembered (${describeError(error)})`;
        await this.#dropInAudit(grantId, entry.session, scope, `the grant could not be saved (${describeError(error)}); the approval counted once`);
        final = { ...final, remembered: false };
        grantId = undefined;
      }
    }
    this.#table.release(entry, { id: entry.id, outcome: final.outcome, via: answer.via });
    entry.resolve(final);
    this.options.emit('approval/resolved', {
      id: entry.id,
      code: entry.code,
      session: entry.request.turn.session,
      outcome: final,
      via: answer.via,
      ...(grantId !== undefined ? { grantId } : {}),
    });
    return { final, ...(grantId !== undefined ? { grantId } : {}), ...(note !== undefined && final.outcome === 'approved' ? { note } : {}) };
  }

  /** An ask answered without being shown: by a grant or by policy. Audited; approved only if audited. */
  async #answerAtOnce(id: string, request: ApprovalRequest, answer: Answer, grantId?: string): Promise<ApprovalOutcome> {
    let final = answer.outcome;
    try {
      await this.#auditResolved(id, null, request, final, answer.via, grantId);
    } catch (error) {
      if (final.outcome === 'approved') final = policyReject(`the grant's use could not be written to the audit log (${describeError(error)}); ${NOTHING_DONE}.`);
      this.#warn(`approval ${id}: audit write failed: ${describeError(error)}`);
    }
    this.options.emit('approval/resolved', {
      id,
      code: null,
      session: request.turn.session,
      outcome: final,
      via: answer.via,
      ...(grantId !== undefined ? { grantId } : {}),
    });
    return final;
  }

  #auditResolved(id: string, code: string | null, request: ApprovalRequest, outcome: ApprovalOutcome, via: ResolutionSource, grantId?: string, note?: string): Promise<void> {
    const reason = outcome.outcome === 'rejected' ? outcome.reason : note;
    return this.#audit.append({
      event: 'resolved',
      id,
      code,
      session: scopeSessionOf(request),
      turn: turnSummaryOf(request.turn),
      subject: request.subject,
      rule: request.subject.rule,
      via,
      answeredBy: outcome.outcome === 'expired' ? null : outcome.by,
      outcome: outcome.outcome,
      ...(reason !== undefined ? { reason } : {}),
      ...(outcome.outcome === 'approved' ? { remembered: outcome.remembered } : {}),
      ...(grantId !== undefined ? { grantId } : {}),
    });
  }

  async #dropInAudit(grantId: string, session: string, scope: GrantScope, reason: string): Promise<void> {
    await this.#audit.append({ event: 'grant-dropped', grantId, session, scope, reason }).catch((error) => this.#warn(`approval: audit write failed for dropping ${grantId}: ${describeError(error)}`));
  }

  /**
   * Whether `by` may answer or revoke for `person`: anyone who got this far (an owner) without
   * persons; with them, only that person or an admin. No person (an unauthenticated turn's ask):
   * only an admin.
   */
  #mayActFor(by: Identity, person: Identity | null): boolean {
    const persons = this.options.persons;
    if (persons === undefined) return true;
    if (persons.admins.some((admin) => samePerson(admin, by))) return true;
    return person !== null && samePerson(person, by);
  }

  async #auditRefusal(id: string, session: string, code: string, by: Identity, refused: string, message: string): Promise<void> {
    await this.#audit.append({ event: 'reply-refused', id, session, code, by, refused, message }).catch((error) => this.#warn(`approval ${id}: audit write failed: ${describeError(error)}`));
  }

  /**
   * Revokes a grant for an owner. The revocation's audit line goes first: if the removal cannot
   * be saved, the restart drops the grant from that line. A line that cannot be written does
   * not stop the revocation (taking a permission away never waits for the log).
   */
  async #revoke(id: string, by: Identity): Promise<RevokeResult> {
    if (!this.options.authority.isOwner(by)) {
      const message = `only the owner may revoke grants; ${by.platform}:${by.userId} is not an owner. Grant ${id} was not touched; ask the owner to revoke it.`;
      await this.#audit.append({ event: 'revoke-refused', grantId: id, session: this.book.get(id)?.session ?? null, by, message }).catch((error) => this.#warn(`approval: audit write failed for a refused revocation of ${id}: ${describeError(error)}`));
      return { ok: false, refused: 'not-owner', message };
    }
    const grant = this.book.get(id);
    if (!grant) return { ok: false, refused: 'unknown-grant', message: `there is no grant ${id}; list the session's grants to see their ids.` };
    if (!this.#mayActFor(by, grant.grantedBy)) {
      const message = `grant ${id} is ${grant.grantedBy.platform}:${grant.grantedBy.userId}'s, and in this deployment each person revokes only their own grants; ${by.platform}:${by.userId} is another person. It was not touched.`;
      await this.#audit.append({ event: 'revoke-refused', grantId: id, session: grant.session, by, message }).catch((error) => this.#warn(`approval: audit write failed for a refused revocation of ${id}: ${describeError(error)}`));
      return { ok: false, refused: 'not-theirs', message };
    }
    const audited = await this.#audit
      .append({ event: 'grant-revoked', grantId: grant.id, session: grant.session, scope: grant.scope, by })
      .then(() => true)
      .catch((error) => {
        this.#warn(`approval: audit write failed for revoking ${grant.id}: ${describeError(error)}`);
        return false;
      });
    try {
      await this.book.remove(id);
    } catch (error) {
      const after = audited ? 'it stays revoked after a restart' : 'it may return after a restart; revoke it again';
      return { ok: false, refused: 'not-saved', message: `grant ${id} is withdrawn for now but the change could not be saved (${describeError(error)}); ${after}.` };
    }
    return { ok: true, grant, message: `grant ${grant.id} is revoked: ${grant.scope.kind} ${grant.scope.target} will be asked again.` };
  }

  async #recover(): Promise<void> {
    const { left, grants, warnings } = await this.#audit.recover();
    for (const warning of warnings) this.#warn(`approval: ${warning}`);
    // Only grants the audit log shows in force are honoured; the rest never happened as far as
    // anybody can check (a crash between writing a grant and its line, or an edited file).
    const dropped = await this.book.retain((grant) => {
      const audited = grants.get(grant.id);
      return audited !== undefined && audited.session === grant.session && audited.approvalId === grant.approvalId && sameScope(audited.scope, grant.scope);
    });
    for (const grant of dropped) {
      this.#warn(`approval: grant ${grant.id} (${grant.scope.kind} ${grant.scope.target}) is not in force in the audit log (never audited, or revoked) and is dropped; its asks will be shown again.`);
      await this.#audit.append({ event: 'grant-dropped', grantId: grant.id, session: grant.session, scope: grant.scope, reason: 'no audit line shows this grant given (or it was revoked); it is not honoured' });
    }
    for (const audited of grants.values()) {
      if (this.book.get(audited.id)?.approvalId === audited.approvalId) continue;
      await this.#audit.append({ event: 'grant-dropped', grantId: audited.id, session: audited.session, scope: audited.scope, reason: 'the daemon stopped before this grant was saved; the approval counted once' });
    }
    const now = this.#now();
    for (const entry of left) {
      const outcome: ApprovalOutcome = { outcome: 'expired', afterMs: Math.max(0, now - entry.createdAt) };
      await this.#audit.append({
        event: 'resolved',
        id: entry.id,
        code: entry.code,
        session: entry.session,
        turn: entry.turn,
        subject: entry.subject,
        rule: entry.subject.rule,
        via: 'restart',
        answeredBy: null,
        outcome: 'expired',
        reason: 'the daemon restarted while this ask was pending; nothing was approved',
      });
      this.options.emit('approval/resolved', { id: entry.id, code: entry.code, session: { id: entry.session }, outcome, via: 'restart' });
    }
    // Checkpoint what recovery wrote and rotate a log that is due, so the next start reads little.
    await this.#audit.upkeep();
  }
}
