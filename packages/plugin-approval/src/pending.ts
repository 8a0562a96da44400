import type { ApprovalOutcome, ApprovalRequest } from '@aalis/core';
import { randomCode } from './code.js';
import type { ResolutionSource } from './events.js';

/** One ask waiting for its answer. */
export interface PendingEntry {
  readonly id: string;
  readonly code: string;
  readonly request: ApprovalRequest;
  /** The (root) session the ask belongs to. */
  readonly session: string;
  readonly approver: 'human' | 'reviewer';
  readonly createdAt: number;
  /** Set when the ask is shown; until then it cannot expire (nobody has seen it yet). */
  expiresAt: number | undefined;
  /**
   * `pending`: open to a reply or expiry. `settling`: claimed by exactly one answer whose
   * record is being written; every other answer is refused from here on.
   */
  state: 'pending' | 'settling';
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Aborted when the ask ends, so a reviewer still thinking stops. */
  readonly abort: AbortController;
  readonly resolve: (outcome: ApprovalOutcome) => void;
}

/** What became of a code, kept for a while so a late reply gets a clear answer. */
export interface SettledCode {
  readonly id: string;
  readonly outcome: ApprovalOutcome['outcome'];
  readonly via: ResolutionSource;
}

const RECENT_LIMIT = 4096;
const CODE_ATTEMPTS = 64;

/**
 * The pending asks, by id and by code. Every change is synchronous, so between two awaits
 * the table is consistent; answers find their entry by id or code (never by position), and
 * an entry is removed only if the very same entry is still there.
 */
export class PendingTable {
  readonly #byId = new Map<string, PendingEntry>();
  readonly #idByCode = new Map<string, string>();
  // Codes settled recently: a late or second reply is told what happened, and the code is
  // not handed to a new ask while someone may still type it for the old one.
  readonly #recent = new Map<string, SettledCode>();

  constructor(private readonly codeLength: number) {}

  /** A code unused by any pending or recently settled ask; `undefined` if none was found. */
  freshCode(): string | undefined {
    for (let i = 0; i < CODE_ATTEMPTS; i++) {
      const code = randomCode(this.codeLength);
      if (!this.#idByCode.has(code) && !this.#recent.has(code)) return code;
    }
    return undefined;
  }

  add(entry: PendingEntry): void {
    if (this.#byId.has(entry.id) || this.#idByCode.has(entry.code)) throw new Error(`approval ${entry.id} (${entry.code}) is already pending`);
    this.#byId.set(entry.id, entry);
    this.#idByCode.set(entry.code, entry.id);
  }

  byId(id: string): PendingEntry | undefined {
    return this.#byId.get(id);
  }

  byCode(code: string): PendingEntry | undefined {
    const id = this.#idByCode.get(code);
    return id === undefined ? undefined : this.#byId.get(id);
  }

  recent(code: string): SettledCode | undefined {
    return this.#recent.get(code);
  }

  /**
   * Phase one of every answer: claims this exact entry if it is still pending. Exactly one
   * caller gets `true`; the entry stays in the table (its code reserved) until {@link release}.
   */
  claim(entry: PendingEntry): boolean {
    if (this.#byId.get(entry.id) !== entry || entry.state !== 'pending') return false;
    entry.state = 'settling';
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.timer = undefined;
    return true;
  }

  /** Phase two, after the answer is recorded: looks the entry up again by id and removes it. */
  release(entry: PendingEntry, settled: SettledCode): void {
    if (this.#byId.get(entry.id) === entry) this.#byId.delete(entry.id);
    if (this.#idByCode.get(entry.code) === entry.id) this.#idByCode.delete(entry.code);
    this.#recent.set(entry.code, settled);
    if (this.#recent.size > RECENT_LIMIT) {
      const oldest = this.#recent.keys().next();
      if (!oldest.done) this.#recent.delete(oldest.value);
    }
  }

  /** Every entry, claimed or not. */
  entries(): PendingEntry[] {
    return [...this.#byId.values()];
  }

  get size(): number {
    return this.#byId.size;
  }
}
