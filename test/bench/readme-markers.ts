import { BenchFiguresError } from './figures-file.js';

/** The comments around the generated "Measured here" table in the root README. */
export const MEASURED_START = '<!-- measured:start (written by `pnpm bench` from one run; do not edit by hand) -->';
/** See {@link MEASURED_START}. */
export const MEASURED_END = '<!-- measured:end -->';

/** The README with the text between its markers replaced by `block`; throws when the markers are missing or out of order. */
export function replaceMeasured(readme: string, block: string): string {
  const from = readme.indexOf(MEASURED_START);
  const to = readme.indexOf(MEASURED_END);
  if (from < 0 || to < from) {
    throw new BenchFiguresError('readme-markers', 'the README has no generated "Measured here" block (its marker comments are missing or out of order)', {
      fix: `put "${MEASURED_START}" and "${MEASURED_END}" on their own lines where the table goes`,
    });
  }
  return `${readme.slice(0, from + MEASURED_START.length)}\n${block}\n${readme.slice(to)}`;
}

/** One row of the README's "Which bench prints which figure": its figure ids and the bench files it names. */
export interface BenchRow {
  readonly ids: readonly string[];
  readonly files: readonly string[];
}

/**
 * The rows of the README's "Which bench prints which figure" table: the backticked ids of its
 * second column ("figure ids") and the `packages/…/bench/…` files of its third ("printed by").
 */
export function readmeBenchRows(readme: string): BenchRow[] {
  const at = readme.indexOf('### Which bench prints which figure');
  if (at < 0) return [];
  const section = readme.slice(at).split(/\n#{2,3} /)[0] ?? '';
  const rows: BenchRow[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('|') || line.startsWith('| ---')) continue;
    const cells = line.split('|');
    const ids = [...(cells[2] ?? '').matchAll(/`([a-z0-9-]+\.[a-z0-9.-]+)`/g)].map((m) => m[1]!);
    const files = [...(cells[3] ?? '').matchAll(/`(packages\/[^`]+\/bench\/[^`]+\.ts)`/g)].map((m) => m[1]!);
    if (ids.length > 0) rows.push({ ids, files });
  }
  return rows;
}

/** Every figure id the README's "Which bench prints which figure" names. */
export function readmeFigureIds(readme: string): string[] {
  return readmeBenchRows(readme).flatMap((r) => r.ids);
}

/**
 * The figure ids a bench's source spells, as patterns: each quoted string or template literal
 * shaped like an id (`'cli.startup-help'`, `` `sandbox-linux.true-large-${name}` ``, where each
 * `${…}` stands for one or more id characters). A grep, not a parse: enough to catch an id the
 * README names that no bench records.
 */
export function benchIdPatterns(source: string): RegExp[] {
  const patterns: RegExp[] = [];
  for (const m of source.matchAll(/(['`])([a-z0-9-]+\.(?:[a-z0-9.-]|\$\{[^}]*\})+)\1/g)) {
    const body = m[2]!
      .split(/\$\{[^}]*\}/)
      .map((part) => part.replace(/[.]/g, '\\.'))
      .join('[a-z0-9-]+');
    patterns.push(new RegExp(`^${body}$`));
  }
  return patterns;
}
