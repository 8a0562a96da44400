import { readFileSync } from 'node:fs';
import { AalisError } from '@aalis/core';
import { type BenchRecord, BenchRecordSchema } from './figure.js';

/** Why a figures file or the README could not be used. */
export const BENCH_FIGURES_ERROR_CODES = ['figures-unreadable', 'figures-invalid', 'readme-markers'] as const;

/** A figures file that cannot be read or parsed, or a README without its markers. */
export class BenchFiguresError extends AalisError<(typeof BENCH_FIGURES_ERROR_CODES)[number]> {}

/** Parses a figures file's text, one record a line (blank lines skipped); names the first bad line. */
export function parseFigures(text: string, file = 'the figures file'): BenchRecord[] {
  const records: BenchRecord[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new BenchFiguresError('figures-invalid', `${file}, line ${i + 1}: not JSON`, { fix: 'each line is one JSON record, written by recordFigure (test/bench/record-figure.ts)' });
    }
    const parsed = BenchRecordSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BenchFiguresError('figures-invalid', `${file}, line ${i + 1}: ${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}`, { fix: 'write figures with recordFigure (test/bench/record-figure.ts), not by hand' });
    }
    records.push(parsed.data);
  }
  return records;
}

/** Reads and parses a figures file. */
export function readFigures(file: string): BenchRecord[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new BenchFiguresError('figures-unreadable', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { fix: 'pass the file `pnpm bench` wrote (it prints its path)' });
  }
  return parseFigures(text, file);
}
