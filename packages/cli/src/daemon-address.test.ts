import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonAddressOf, takeOptions } from './daemon-address.js';
import { NotOwnDirError } from './own-dir.js';

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

// The token a client command reads is sent to the address the url file names: both come from the
// data directory, which must be this user's own, and are read as regular files, never through a
// symlink (an attack swapped them in another user's writable data directory and took the token).
describe('daemonAddressOf: where a client command finds the daemon', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-address-')));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const withoutToken = <T>(f: () => T): T => {
    const saved = process.env.AALIS_TOKEN;
    delete process.env.AALIS_TOKEN;
    try {
      return f();
    } finally {
      if (saved !== undefined) process.env.AALIS_TOKEN = saved;
    }
  };
  const dataWith = (name: string, mode: number) => {
    const data = join(base, name);
    mkdirSync(join(data, 'daemon'), { recursive: true });
    chmodSync(data, mode);
    writeFileSync(join(data, 'daemon', 'url'), 'http://127.0.0.1:1\n');
    writeFileSync(join(data, 'daemon', 'token'), 'tok\n');
    return data;
  };

  it('reads the url and the token of a data directory of its own', () => {
    const data = dataWith('own', 0o700);
    expect(withoutToken(() => daemonAddressOf(['--data', data]))).toEqual({ url: 'http://127.0.0.1:1', token: 'tok' });
  });

  it('refuses a data directory others may write, before reading anything in it', () => {
    const data = dataWith('open', 0o777);
    expect(() => withoutToken(() => daemonAddressOf(['--data', data]))).toThrow(NotOwnDirError);
  });

  it('does not read a token through a symlink put in its place', () => {
    const data = dataWith('linked', 0o700);
    writeFileSync(join(base, 'elsewhere'), 'not-the-token\n');
    rmSync(join(data, 'daemon', 'token'));
    symlinkSync(join(base, 'elsewhere'), join(data, 'daemon', 'token'));
    expect(() => withoutToken(() => daemonAddressOf(['--data', data]))).toThrow(/daemon token at .* was not read/);
  });

  it('with --url and no AALIS_TOKEN, says to set AALIS_TOKEN', () => {
    const data = join(base, 'none');
    expect(() => withoutToken(() => daemonAddressOf(['--data', data, '--url', 'http://127.0.0.1:2']))).toThrow(/give the daemon's token in AALIS_TOKEN/);
  });
});
