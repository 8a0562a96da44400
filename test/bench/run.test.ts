import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MEASURED_END, MEASURED_START } from './readme-markers.js';

const REPO = join(import.meta.dirname, '..', '..');
const FIXTURES = join(import.meta.dirname, 'fixtures');
const dir = mkdtempSync(join(tmpdir(), 'aalis-bench-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const IDS = ['sandbox-linux.true-network-off', 'cli.run-command-sequential', 'cli.host-cpu-long-command', 'cli.exec-docker-probe-cache'];
const readmeText = (ids: readonly string[], markers = true) =>
  [
    '# x',
    '## Measured here',
    ...(markers ? [MEASURED_START, 'the old table', MEASURED_END] : ['no markers']),
    '### Which bench prints which figure',
    '| figure | figure ids | printed by |',
    '| --- | --- | --- |',
    `| all | ${ids.map((id) => `\`${id}\``).join(', ')} | \`packages/x/bench/x.ts\` |`,
    '## After',
    '',
  ].join('\n');

/** `pnpm bench --render` on a fixture, against a README of our own: the real script, in a child. */
function render(fixture: string, readme: string, ...flags: string[]) {
  const path = join(dir, `README-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(path, readme);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=aalis-source', join(import.meta.dirname, 'run.ts'), '--render', join(FIXTURES, fixture), '--readme', path, ...flags], { cwd: REPO, encoding: 'utf8', timeout: 100_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, after: readFileSync(path, 'utf8') };
}

// each case starts node with the TypeScript loader: generous on a loaded machine running the whole suite
describe('pnpm bench --render: the README written from one run, never from a quick or partial one', { timeout: 120_000 }, () => {
  it('writes the table of a complete run between the markers, and nothing else', () => {
    const before = readmeText(IDS);
    const r = render('full-run.jsonl', before, '--write');
    expect(r.status, r.out).toBe(0);
    expect(r.after).not.toContain('the old table');
    expect(r.after).toContain('| `true` through `LinuxSandbox.run`, network off<br>`sandbox-linux.true-network-off` | 33 ms |');
    expect(r.after.replace(/<!-- measured:start[\s\S]*<!-- measured:end -->/, '')).toBe(before.replace(/<!-- measured:start[\s\S]*<!-- measured:end -->/, ''));
  });

  it('refuses a quick run, saying why, and leaves the README as it was', () => {
    const before = readmeText(IDS);
    const r = render('quick-run.jsonl', before, '--write');
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('README not written from this run');
    expect(r.out).toContain('a quick run (BENCH_QUICK=1)');
    expect(r.after).toBe(before);
  });

  it('writes a quick run only when forced, and the table says it was quick', () => {
    const r = render('quick-run.jsonl', readmeText(IDS), '--write', '--force');
    expect(r.status, r.out).toBe(0);
    expect(r.after).toContain('**A quick run (`BENCH_QUICK=1`)');
  });

  it('refuses a run that lacks a figure the README names, and fails', () => {
    const before = readmeText([...IDS, 'cli.startup-help']);
    const r = render('full-run.jsonl', before, '--write');
    expect(r.status).toBe(1);
    expect(r.out).toContain('figures the README names were not recorded: cli.startup-help');
    expect(r.after).toBe(before);
  });

  it('only prints without --write', () => {
    const before = readmeText(IDS);
    const r = render('full-run.jsonl', before);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('| figure | this run |');
    expect(r.after).toBe(before);
  });

  it.each([
    ['a README without its markers', 'full-run.jsonl', readmeText(IDS, false), 'no generated "Measured here" block'],
    ['a figures file that does not exist', 'nothing-here.jsonl', readmeText(IDS), 'cannot read'],
  ])('says what is wrong with %s, without a stack trace', (_, fixture, readme, message) => {
    const r = render(fixture, readme, '--write');
    expect(r.status).toBe(2);
    expect(r.out).toContain(message);
    expect(r.out).toMatch(/fix: /);
    expect(r.out).not.toMatch(/\n\s+at /);
    expect(r.after).toBe(readme);
  });
});
