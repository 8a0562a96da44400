import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIGURES_ENV } from './figure.js';
import { parseFigures } from './figures-file.js';
import { recordFigure, recordSkipped } from './record-figure.js';

describe('recordFigure: one JSON line a figure, to the file the runner names', () => {
  let dir: string;
  let file: string;
  const saved = { figures: process.env[FIGURES_ENV], quick: process.env.BENCH_QUICK };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'aalis-record-figure-'));
    file = join(dir, 'figures.jsonl');
    process.env[FIGURES_ENV] = file;
    delete process.env.BENCH_QUICK;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [key, value] of [[FIGURES_ENV, saved.figures], ['BENCH_QUICK', saved.quick]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  const base = { what: 'x', unit: 'ms', rounds: 3 } as const;

  // target, candidate, baseline, expected ratio, expected verdict
  it.each([
    ['a ratio under its limit', { on: 'ratio', op: '<=', limit: 1.6 }, 33, 22, 1.5, true],
    ['a ratio over its limit', { on: 'ratio', op: '<=', limit: 1.6 }, 55, 22, 2.5, false],
    ['a rate that must reach a floor', { on: 'value', op: '>=', limit: 60 }, 7, undefined, undefined, false],
    ['a strict bound met', { on: 'value', op: '<', limit: 2 }, 1.66, undefined, undefined, true],
    ['a strict bound hit exactly', { on: 'value', op: '<', limit: 2 }, 2, undefined, undefined, false],
    ['a ratio target with a zero baseline (no ratio: not met)', { on: 'ratio', op: '<=', limit: 1.2 }, 5, 0, undefined, false],
  ] as const)('%s', (_, target, candidate, baseline, ratio, met) => {
    const r = recordFigure({ ...base, id: 'pkg.case', target, candidate, baseline: baseline === undefined ? undefined : { what: 'b', value: baseline } });
    expect(r.met).toBe(met);
    if (ratio === undefined) expect(r.ratio).toBeUndefined();
    else expect(r.ratio).toBeCloseTo(ratio, 6);
    const [line] = parseFigures(readFileSync(file, 'utf8'));
    expect(line).toEqual(r);
  });

  it('says the run was quick, and which bench recorded it', () => {
    process.env.BENCH_QUICK = '1';
    const r = recordFigure({ ...base, id: 'pkg.quick', candidate: 1 });
    expect(r.quick).toBe(true);
    expect(r.bench).not.toMatch(/^\//);
    expect(r.load).toHaveLength(3);
  });

  it('appends, one line a record, skipped benches included', () => {
    recordFigure({ ...base, id: 'pkg.one', candidate: 1 });
    recordSkipped(['pkg.two'], 'no engine');
    expect(parseFigures(readFileSync(file, 'utf8')).map((r) => r.kind)).toEqual(['figure', 'skipped']);
  });

  it('refuses a figure that does not fit, and writes nothing', () => {
    expect(() => recordFigure({ ...base, id: 'Not an id', candidate: 1 })).toThrow(/figure id/);
    expect(() => recordFigure({ ...base, id: 'pkg.nan', candidate: Number.NaN })).toThrow();
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });

  it('only prints when run alone (no figures file named)', () => {
    delete process.env[FIGURES_ENV];
    recordFigure({ ...base, id: 'pkg.alone', candidate: 1 });
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });
});
