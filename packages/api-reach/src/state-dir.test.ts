import { describe, expect, it } from 'vitest';
import { aalisStateDir } from './state-dir.js';

describe('aalisStateDir', () => {
  it.each<[Record<string, string | undefined>, string, string]>([
    [{}, '/home/ada', '/home/ada/.local/state/aalis'],
    [{ XDG_STATE_HOME: '/var/state' }, '/home/ada', '/var/state/aalis'],
    [{ XDG_STATE_HOME: '/var/state/' }, '/home/ada', '/var/state/aalis'],
    // relative: ignored, as the XDG spec says
    [{ XDG_STATE_HOME: 'state' }, '/home/ada', '/home/ada/.local/state/aalis'],
    [{ XDG_STATE_HOME: '' }, '/home/ada', '/home/ada/.local/state/aalis'],
    [{}, '/', '/.local/state/aalis'],
  ])('%j with home %s: %s', (env, home, dir) => {
    expect(aalisStateDir(env, home)).toBe(dir);
  });
});
