import { describe, expect, it } from 'vitest';
import { PodUsageError, parsePodArgs } from './pod-args.js';

describe('parsePodArgs', () => {
  it.each([
    { argv: ['make a CSV', '--subdir', 'cli', '--wait'], positional: ['make a CSV'], values: { '--subdir': ['cli'] }, flags: ['--wait'] },
    { argv: ['--subdir=-x', 'task'], positional: ['task'], values: { '--subdir': ['-x'] }, flags: [] },
    { argv: ['--', '-n is not a flag'], positional: ['-n is not a flag'], values: {}, flags: [] },
    { argv: ['id', '--files', 'a', '--files=b,c', '--to', 'out'], positional: ['id'], values: { '--files': ['a', 'b,c'], '--to': ['out'] }, flags: [] },
    { argv: ['-h'], positional: [], values: {}, flags: ['--help'] },
    { argv: ['-'], positional: ['-'], values: {}, flags: [] },
  ])('reads $argv', ({ argv, positional, values, flags }) => {
    const parsed = parsePodArgs(argv);
    expect(parsed.positional).toEqual(positional);
    expect(Object.fromEntries(parsed.values)).toEqual(values);
    expect([...parsed.flags]).toEqual(flags);
  });

  it.each([
    { argv: ['x', '--bogus'], message: 'unknown option --bogus' },
    { argv: ['-n task'], message: 'unknown option -n' },
    { argv: ['id', '--to'], message: '--to needs a value' },
    { argv: ['id', '--files', '--yes'], message: '--files needs a value; a value that starts with' },
    { argv: ['--json=1'], message: '--json takes no value' },
  ])('refuses $argv', ({ argv, message }) => {
    expect(() => parsePodArgs(argv)).toThrow(PodUsageError);
    expect(() => parsePodArgs(argv)).toThrow(message);
  });
});
