import { describe, expect, it } from 'vitest';
import { takeOptions } from './daemon-address.js';

describe("takeOptions: the daemon-address flags, read by node's parser", () => {
  it.each([
    ['separate values, other flags left for the next parser', ['run', 'x', '--dir', '/d', '--subdir', 's'], { dir: '/d' }, ['run', 'x', '--subdir', 's']],
    ['an inline value', ['--url=http://h:1', 'list'], { url: 'http://h:1' }, ['list']],
    ['a value that starts with -', ['--dir=-odd', 'list', '--data', '-d'], { dir: '-odd', data: '-d' }, ['list']],
    ['nothing after --', ['--url', 'u', '--', '--dir', 'after'], { url: 'u' }, ['--', '--dir', 'after']],
    ['none given', ['list', '--json'], {}, ['list', '--json']],
  ])('%s', (_what, argv, values, rest) => {
    const args = [...argv];
    expect(takeOptions(args, ['dir', 'data', 'url'])).toEqual(values);
    expect(args).toEqual(rest);
  });

  it('refuses a flag without its value, naming it', () => {
    expect(() => takeOptions(['list', '--dir'], ['dir'])).toThrow('--dir needs a value');
  });
});
