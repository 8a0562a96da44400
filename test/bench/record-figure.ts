import { appendFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { relative, resolve } from 'node:path';
import { FIGURES_ENV, type FigureRecord, FigureRecordSchema, meets, type SkippedRecord, SkippedRecordSchema, type Target } from './figure.js';

/** What a bench says about one figure; the rest (ratio, met, load, date, quick, bench file) is filled in here. */
export interface FigureInput {
  /** The figure's stable id, as the root README's "Which bench prints which figure" names it. */
  readonly id: string;
  readonly what: string;
  readonly candidate: number;
  readonly baseline?: { readonly what: string; readonly value: number } | undefined;
  readonly unit: string;
  readonly target?: Target | undefined;
  readonly rounds: number;
  readonly note?: string | undefined;
}

const REPO = resolve(import.meta.dirname, '..', '..');

/** The running bench file, relative to the repository root. */
function benchFile(): string {
  return relative(REPO, resolve(process.argv[1] ?? 'unknown'));
}

function append(record: FigureRecord | SkippedRecord): void {
  const file = process.env[FIGURES_ENV];
  // A bench run alone (no runner) only prints: nothing to append to.
  if (file === undefined || file === '') return;
  // One short line with O_APPEND: benches run one at a time, and a line never interleaves anyway.
  appendFileSync(file, `${JSON.stringify(record)}\n`);
}

/**
 * Records one figure of this bench to the run's figures file (`AALIS_BENCH_FIGURES`), with its
 * ratio to the baseline and whether its target was met; a no-op when the variable is unset. Throws
 * on a figure that does not fit the schema (a bench's bug: better a failed bench than a wrong row).
 */
export function recordFigure(input: FigureInput): FigureRecord {
  const ratio = input.baseline === undefined ? undefined : input.candidate / input.baseline.value;
  const record = FigureRecordSchema.parse({
    kind: 'figure',
    id: input.id,
    what: input.what,
    bench: benchFile(),
    candidate: input.candidate,
    baseline: input.baseline,
    unit: input.unit,
    ratio: ratio !== undefined && Number.isFinite(ratio) ? ratio : undefined,
    target: input.target,
    met: input.target === undefined ? undefined : meets(input.target, input.candidate, ratio),
    rounds: input.rounds,
    note: input.note,
    quick: process.env.BENCH_QUICK === '1',
    load: loadavg(),
    at: new Date().toISOString(),
  });
  append(record);
  return record;
}

/** Records that this bench could not measure `ids` here, and why (the table says so instead of a figure). */
export function recordSkipped(ids: readonly string[], reason: string): SkippedRecord {
  const record = SkippedRecordSchema.parse({ kind: 'skipped', bench: benchFile(), ids: [...ids], reason, at: new Date().toISOString() });
  append(record);
  return record;
}
