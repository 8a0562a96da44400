/*
 * Steps of the wall clock during a run (an NTP step, `date -s`). The file systems stamp ctimes
 * from the wall clock, so after a step back an edit is stamped before the run's start and the
 * commit would take it for unchanged (commit-conflicts.ts). The wall clock minus the monotonic
 * clock (which no step moves) is constant unless the wall clock is stepped, so sampling it shows
 * every step that lasts longer than the pause between two samples. One timer serves every open
 * run (none runs while no run is open); each run keeps the lowest value seen since its start.
 */

/** The wall clock minus the monotonic clock, in ns (1 ms resolution): constant unless the wall clock is stepped. */
export type ClockOffset = () => bigint;

/** {@link ClockOffset} from this process's clocks. */
export const wallMinusMonotonic: ClockOffset = () => BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** The pause between two samples while a run is open (ms): a step back and forward again within it is not seen. */
export const SAMPLE_MS = 100;

/** One run's view of the clock since it started. */
export class StepWindow {
  private lowest: bigint;

  /** @param start the offset when the run started. */
  constructor(
    private readonly watch: ClockStepWatch,
    readonly start: bigint,
  ) {
    this.lowest = start;
  }

  /** Records one sample. */
  see(offset: bigint): void {
    if (offset < this.lowest) this.lowest = offset;
  }

  /** The largest step back of the wall clock since the start (ns, 0n for none), a sample taken now included. */
  stepBack(): bigint {
    this.see(this.watch.read());
    return this.start - this.lowest;
  }

  /** Samples for this run again (its writes were kept for an answer: a later commit reads {@link stepBack}). */
  resume(): void {
    this.watch.add(this);
  }

  /** Stops sampling for this run; what it saw is kept. */
  pause(): void {
    this.watch.remove(this);
  }
}

/** What a {@link ClockStepWatch} reads and how often. */
export interface ClockStepOptions {
  readonly clock?: ClockOffset;
  /** Pause between samples (ms); default {@link SAMPLE_MS}. */
  readonly everyMs?: number;
  /** For tests: told after each timed sample. */
  readonly onSample?: () => void;
}

/**
 * Samples {@link ClockOffset} on one unref'd timer while at least one run is open. Runs are held
 * weakly: a run dropped without being paused (its launch failed) stops being sampled once it is
 * collected, so no window keeps the timer alive for ever.
 */
export class ClockStepWatch {
  private readonly refs = new Set<WeakRef<StepWindow>>();
  private readonly refOf = new WeakMap<StepWindow, WeakRef<StepWindow>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly clock: ClockOffset;
  private readonly everyMs: number;

  constructor(private readonly options: ClockStepOptions = {}) {
    this.clock = options.clock ?? wallMinusMonotonic;
    this.everyMs = options.everyMs ?? SAMPLE_MS;
  }

  /** The offset now. */
  read(): bigint {
    return this.clock();
  }

  /** Opens a run's window, starting now, and samples for it until it is paused. */
  open(): StepWindow {
    const w = new StepWindow(this, this.clock());
    this.add(w);
    return w;
  }

  /** Whether the timer runs (some run is open). */
  get active(): boolean {
    return this.timer !== undefined;
  }

  /** Samples once for every open run. */
  sample(): void {
    const now = this.clock();
    for (const r of this.refs) {
      const w = r.deref();
      if (w === undefined) this.refs.delete(r);
      else w.see(now);
    }
    if (this.refs.size === 0) this.disarm();
  }

  /** @internal */
  add(w: StepWindow): void {
    let r = this.refOf.get(w);
    if (r === undefined) {
      r = new WeakRef(w);
      this.refOf.set(w, r);
    }
    this.refs.add(r);
    if (this.timer === undefined) {
      this.timer = setInterval(() => {
        this.sample();
        this.options.onSample?.();
      }, this.everyMs);
      this.timer.unref(); // sampling never holds the daemon open
    }
  }

  /** @internal */
  remove(w: StepWindow): void {
    const r = this.refOf.get(w);
    if (r !== undefined) this.refs.delete(r);
    if (this.refs.size === 0) this.disarm();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The watch every run of this process shares: one timer, whatever the number of sandboxes and runs. */
export const clockSteps = new ClockStepWatch();
