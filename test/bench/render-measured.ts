import type { BenchRecord, FigureRecord, RunEndRecord, RunStartRecord, SkippedRecord, Target } from './figure.js';

/** Why the README must not be written from a run. */
export const REFUSAL_CODES = ['quick', 'no-start', 'unfinished', 'bench-failed', 'missing', 'twice'] as const;

/** One reason the README must not be written from a run. */
export interface Refusal {
  readonly code: (typeof REFUSAL_CODES)[number];
  readonly message: string;
}

/** The table of one run, and why the README must not be written from it (empty when it may). */
export interface RenderedRun {
  readonly markdown: string;
  readonly refusals: readonly Refusal[];
}

const num = (x: number): string => {
  const a = Math.abs(x);
  return x.toFixed(a >= 100 || Number.isInteger(x) ? 0 : a >= 10 ? 1 : 2);
};
const withUnit = (x: number, unit: string): string => (unit === '%' || unit === '×' ? `${num(x)}${unit}` : `${num(x)} ${unit}`);
const OP = { '<=': '≤', '<': '<', '>=': '≥' } as const;
const targetText = (t: Target, unit: string): string => `${OP[t.op]} ${t.on === 'ratio' ? `${t.limit}×` : withUnit(t.limit, unit)}`;
const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
const day = (iso: string): string => iso.slice(0, 16).replace('T', ' ');

function figureRow(f: FigureRecord): string {
  const what = `${f.what}${f.note === undefined ? '' : `; ${f.note}`}<br>\`${f.id}\``;
  const baseline = f.baseline === undefined ? '—' : `${f.baseline.what}: ${withUnit(f.baseline.value, f.unit)}`;
  const ratio = f.ratio === undefined ? '—' : `${f.ratio.toFixed(2)}×`;
  const target = f.target === undefined ? '—' : targetText(f.target, f.unit);
  const met = f.met === undefined ? '—' : f.met ? 'met' : '**missed**';
  return `| ${cell(what)} | ${cell(withUnit(f.candidate, f.unit))} | ${cell(baseline)} | ${ratio} | ${target} | ${met} | ${f.rounds} | ${f.load[0].toFixed(1)} |`;
}

/**
 * Renders the "Measured here" table of one `pnpm bench` run from its records: the machine and the
 * run (date, commit, cores, kernel, uid, load at start and end), one row per figure with its
 * baseline, ratio, target and verdict, what was skipped and why, and the README's figure ids the
 * run did not record. `refusals` says why the README must not be written from this run (a quick
 * run, an unfinished run, a figure missing); the caller writes it only when empty, or when forced.
 */
export function renderMeasured(records: readonly BenchRecord[], expectedIds: readonly string[]): RenderedRun {
  const start = records.find((r): r is RunStartRecord => r.kind === 'run-start');
  const end = records.findLast((r): r is RunEndRecord => r.kind === 'run-end');
  const figures = records.filter((r): r is FigureRecord => r.kind === 'figure');
  const skipped = records.filter((r): r is SkippedRecord => r.kind === 'skipped');
  const quick = (start?.quick ?? false) || figures.some((f) => f.quick);
  const recorded = new Set(figures.map((f) => f.id));
  const missing = expectedIds.filter((id) => !recorded.has(id));
  const twice = [...recorded].filter((id) => figures.filter((f) => f.id === id).length > 1);

  const refusals: Refusal[] = [];
  if (quick) refusals.push({ code: 'quick', message: 'a quick run (BENCH_QUICK=1): fewer rounds and small trees, not the figures of the issues' });
  if (start === undefined) refusals.push({ code: 'no-start', message: 'the run has no start record (not written by `pnpm bench`)' });
  if (end === undefined) refusals.push({ code: 'unfinished', message: 'the run did not finish (no end record)' });
  else if (end.exitCode !== 0) refusals.push({ code: 'bench-failed', message: `a bench failed (turbo run bench exited ${end.exitCode})` });
  if (missing.length > 0) refusals.push({ code: 'missing', message: `figures the README names were not recorded: ${missing.join(', ')}` });
  if (twice.length > 0) refusals.push({ code: 'twice', message: `figures recorded more than once (two runs in one file?): ${twice.join(', ')}` });

  const lines: string[] = [];
  if (quick) lines.push('**A quick run (`BENCH_QUICK=1`): fewer rounds and small trees; a check that the chain runs, not the figures of the issues.**', '');
  if (start !== undefined) {
    const user = start.uid === 0 ? 'as root' : `as uid ${start.uid}`;
    const minutes = end === undefined ? 0 : Math.round((Date.parse(end.at) - Date.parse(start.at)) / 60_000);
    const until = end === undefined ? 'did not finish' : `to ${day(end.at)} UTC (${minutes} min), load ${end.load[0].toFixed(2)} at the end`;
    lines.push(
      `One \`pnpm bench\` run from ${day(start.at)} UTC (load ${start.load[0].toFixed(2)} at the start) ${until}; commit ${start.commit}, ${user}, ${start.cores} cores, Linux ${start.kernel}. ` +
        'Each ratio is the figure over its baseline measured in the same run (interleaved rounds, medians); load is the 1-minute average when the figure was recorded.',
      '',
    );
  }
  lines.push('| figure | this run | baseline, same run | ratio | target | met | rounds | load |', '| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const f of figures) lines.push(figureRow(f));
  const withTarget = figures.filter((f) => f.met !== undefined);
  lines.push('', `Targets: ${withTarget.filter((f) => f.met).length} met, ${withTarget.filter((f) => !f.met).length} missed, of ${withTarget.length} measured.`);
  for (const s of skipped) lines.push(`Not measured by \`${s.bench}\` (${s.ids.map((id) => `\`${id}\``).join(', ')}): ${s.reason}.`);
  const unexplained = missing.filter((id) => !skipped.some((s) => s.ids.includes(id)));
  if (unexplained.length > 0) lines.push(`Named in "Which bench prints which figure" but not recorded by this run: ${unexplained.map((id) => `\`${id}\``).join(', ')}.`);
  if (end !== undefined && end.exitCode !== 0) lines.push(`The run did not end well: \`turbo run bench\` exited ${end.exitCode}.`);
  return { markdown: lines.join('\n'), refusals };
}
