/*
 * `pnpm bench`: every package's bench (turbo, one at a time), each recording its figures to one
 * file, then the root README's "Measured here" table rendered from that one run.
 *
 *   pnpm bench                       the full run; the README is rewritten when the run is complete
 *   pnpm bench --quick               BENCH_QUICK=1: minutes, not the figures (README never written)
 *   pnpm bench --only @aalis/cli     only some packages (turbo's --filter; README not written)
 *   pnpm bench --render FILE         render a figures file of an earlier run (README with --write)
 *   --no-readme                      never write the README;  --force  write it whatever the run was
 *   --readme PATH                    another README than the repository's (for tests)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, release } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FIGURES_ENV, type RunEndRecord, type RunStartRecord } from './figure.js';
import { BenchFiguresError, readFigures } from './figures-file.js';
import { readmeFigureIds, replaceMeasured } from './readme-markers.js';
import { renderMeasured } from './render-measured.js';
import { BENCH_TMP_PREFIX, useTestTmp } from '../test-tmp.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string', multiple: true },
    render: { type: 'string' },
    write: { type: 'boolean', default: false },
    'no-readme': { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
    readme: { type: 'string' },
  },
});

/** Whether this invocation may write the README at all: a whole run (not --only, not --no-readme), or --render with --write. */
function wantsReadme(): boolean {
  return values.render === undefined ? !values['no-readme'] && (values.only ?? []).length === 0 : values.write;
}

function fail(message: string): never {
  console.error(`pnpm bench: ${message}`);
  process.exit(2);
}

const README = resolve(values.readme ?? join(REPO, 'README.md'));
const git = (...args: string[]) => spawnSync('git', args, { cwd: REPO, encoding: 'utf8' }).stdout.trim();

/** The README's text, its markers checked first when it is to be written: a long run must not end on a README it cannot write. */
function readReadme(): string {
  try {
    const text = readFileSync(README, 'utf8');
    if (wantsReadme()) replaceMeasured(text, '');
    return text;
  } catch (e) {
    if (e instanceof BenchFiguresError) fail(`${e.message}${e.fix === undefined ? '' : `\n  fix: ${e.fix}`}`);
    fail(`cannot read ${README}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
readReadme();

let file: string;
let exitCode = 0;
if (values.render !== undefined) {
  file = resolve(values.render);
} else {
  const quick = values.quick || process.env.BENCH_QUICK === '1';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  file = resolve(process.env[FIGURES_ENV] || join(process.env.BENCH_DIR ?? '/var/tmp/aalis-bench', `figures-${stamp}${quick ? '-quick' : ''}.jsonl`));
  // one run a file: two runs in one would read as one
  if (existsSync(file) && statSync(file).size > 0) fail(`${file} already holds a run; unset ${FIGURES_ENV} or name a new file`);
  mkdirSync(resolve(file, '..'), { recursive: true });
  const dirty = git('status', '--porcelain').length > 0 ? '-dirty' : '';
  const start: RunStartRecord = { kind: 'run-start', at: new Date().toISOString(), quick, commit: `${git('rev-parse', '--short', 'HEAD')}${dirty}`, cores: availableParallelism(), kernel: release(), uid: process.getuid?.() ?? -1, load: loadavg() as [number, number, number] };
  writeFileSync(file, `${JSON.stringify(start)}\n`);
  console.log(`pnpm bench: figures to ${file}${quick ? ' (quick)' : ''}; load ${start.load.map((l) => l.toFixed(2)).join(' ')}`);
  // what the benches make in the temp directories goes with the run (a killed run's, with the next)
  useTestTmp(BENCH_TMP_PREFIX);
  const filters = (values.only ?? []).map((f) => `--filter=${f}`);
  // --continue: a failed bench must not cost the figures of the rest of a long run (the README is refused anyway)
  const turbo = spawnSync('pnpm', ['exec', 'turbo', 'run', 'bench', '--concurrency=1', '--continue', ...filters], {
    cwd: REPO,
    stdio: 'inherit',
    env: { ...process.env, [FIGURES_ENV]: file, ...(quick ? { BENCH_QUICK: '1' } : {}) },
  });
  exitCode = turbo.status ?? 1;
  const end: RunEndRecord = { kind: 'run-end', at: new Date().toISOString(), exitCode, load: loadavg() as [number, number, number] };
  writeFileSync(file, `${JSON.stringify(end)}\n`, { flag: 'a' });
}

const readme = readReadme();
let rendered: ReturnType<typeof renderMeasured>;
try {
  rendered = renderMeasured(readFigures(file), readmeFigureIds(readme));
} catch (e) {
  if (e instanceof BenchFiguresError) fail(`${e.message}${e.fix === undefined ? '' : `\n  fix: ${e.fix}`}`);
  throw e;
}
console.log(`\n${rendered.markdown}\n`);
// a fresh run keeps its table beside its figures; --render only prints
const table = `${file.replace(/\.jsonl$/, '')}.md`;
if (values.render === undefined) writeFileSync(table, `${rendered.markdown}\n`);
if (!wantsReadme()) {
  console.log(`pnpm bench: README not written${values.render === undefined ? ` (the table is in ${table})` : ' (--write writes it)'}`);
} else if (rendered.refusals.length > 0 && !values.force) {
  console.log(`pnpm bench: README not written from this run:\n${rendered.refusals.map((r) => `  - ${r.message}`).join('\n')}\n  (--force writes it anyway; a quick run's table must never be committed)`);
  // a quick run is expected to stop here; a full run that cannot regenerate the table failed its purpose
  if (exitCode === 0 && !rendered.refusals.some((r) => r.code === 'quick')) exitCode = 1;
} else {
  // whole or not at all: a reader (or git) never sees half a README
  const temp = `${README}.${process.pid}.tmp`;
  writeFileSync(temp, replaceMeasured(readme, rendered.markdown));
  renameSync(temp, README);
  console.log(`pnpm bench: README.md "Measured here" rewritten from ${file}${rendered.refusals.length > 0 ? ' (forced, despite: ' + rendered.refusals.map((r) => r.message).join('; ') + ')' : ''}`);
}
process.exit(exitCode);
