import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchRecord, FigureRecord } from './figure.js';
import { parseFigures, readFigures } from './figures-file.js';
import { renderMeasured } from './render-measured.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'full-run.jsonl');
const full = readFigures(FIXTURE);
const start = full.find((r) => r.kind === 'run-start')!;
const end = full.find((r) => r.kind === 'run-end')!;
const figure = full.find((r): r is FigureRecord => r.kind === 'figure')!;
const ids = ['sandbox-linux.true-network-off', 'cli.run-command-sequential', 'cli.host-cpu-long-command', 'cli.exec-docker-probe-cache'];

describe('renderMeasured: the README table of one run', () => {
  it('renders the fixture run: machine, every figure with baseline, ratio, target and verdict, and what was skipped', () => {
    const { markdown, refusals } = renderMeasured(full, ids);
    expect(refusals).toEqual([]);
    expect(markdown.split('\n')).toEqual([
      'One `pnpm bench` run from 2026-12-03 21:00 UTC (load 0.42 at the start) to 2026-12-03 21:30 UTC (30 min), load 1.75 at the end; commit abc1234, as root, 2 cores, Linux 6.1.0-28-amd64. Each ratio is the figure over its baseline measured in the same run (interleaved rounds, medians); load is the 1-minute average when the figure was recorded.',
      '',
      '| figure | this run | baseline, same run | ratio | target | met | rounds | load |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
      '| `true` through `LinuxSandbox.run`, network off<br>`sandbox-linux.true-network-off` | 33 ms | bubblewrap alone: 22 ms | 1.50× | ≤ 1.6× | met | 60 | 1.2 |',
      '| sequential `run_command true`; built daemon<br>`cli.run-command-sequential` | 7.04 calls/s | — | — | ≥ 60 calls/s | **missed** | 60 | 2.0 |',
      '| host side \\| CPU<br>`cli.host-cpu-long-command` | 1.66% | — | — | < 2% | met | 1 | 2.5 |',
      '| exec docker, cache warm<br>`cli.exec-docker-probe-cache` | 5224 ms | probing: 6351 ms | 0.82× | — | — | 5 | 3.0 |',
      '',
      'Targets: 2 met, 1 missed, of 3 measured.',
      'Not measured by `packages/sandbox-docker/bench/docker-run.ts` (`sandbox-docker.one-shot`, `sandbox-docker.session-exec`): no docker engine.',
    ]);
  });

  // Each case: the records of a run, the ids the README names, the refusals expected, a line the table must hold.
  const cases: [string, BenchRecord[], string[], string[], string][] = [
    ['a complete run', full, ids, [], 'Targets: 2 met, 1 missed'],
    ['a quick run (its start says so)', full.map((r) => (r.kind === 'run-start' ? { ...r, quick: true } : r)), ids, ['quick'], '**A quick run (`BENCH_QUICK=1`)'],
    ['a quick figure in a full run', full.map((r) => (r === figure ? { ...figure, quick: true } : r)), ids, ['quick'], '**A quick run'],
    ['a run that did not finish', full.filter((r) => r.kind !== 'run-end'), ids, ['unfinished'], 'did not finish;'],
    ['a bench failed', full.map((r) => (r === end ? { ...end, exitCode: 1 } : r)), ids, ['bench-failed'], 'The run did not end well: `turbo run bench` exited 1.'],
    ['no start record', full.filter((r) => r !== start), ids, ['no-start'], '| figure | this run |'],
    ['a skipped figure the README names', full, [...ids, 'sandbox-docker.one-shot'], ['missing'], 'Not measured by `packages/sandbox-docker/bench/docker-run.ts`'],
    ['a figure nobody recorded', full, [...ids, 'cli.startup-help'], ['missing'], 'not recorded by this run: `cli.startup-help`'],
    ['a figure recorded twice', [...full, figure], ids, ['twice'], 'Targets: 3 met'],
  ];
  it.each(cases)('%s', (_, records, expected, codes, line) => {
    const { markdown, refusals } = renderMeasured(records, expected);
    expect(refusals.map((r) => r.code)).toEqual(codes);
    expect(markdown).toContain(line);
  });
});

describe('parseFigures: the file between the benches and the renderer', () => {
  const good = JSON.stringify(figure);
  it.each([
    ['not JSON', `${good}\n{oops`, 'line 2: not JSON'],
    ['an unknown kind', JSON.stringify({ kind: 'other' }), 'line 1: kind'],
    ['a bad id', JSON.stringify({ ...figure, id: 'No Id' }), 'line 1: id: a figure id is'],
    ['a ratio that is not a number', JSON.stringify({ ...figure, ratio: 'fast' }), 'line 1: ratio'],
  ])('refuses %s, naming the line', (_, text, message) => {
    expect(() => parseFigures(text, 'f.jsonl')).toThrow(message);
  });
  it('skips blank lines', () => {
    expect(parseFigures(`\n${good}\n\n`)).toHaveLength(1);
  });
});
