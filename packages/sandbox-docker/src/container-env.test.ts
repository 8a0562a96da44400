import { describe, expect, it } from 'vitest';
import { CONTAINER_PATH, containerEnv } from './container-env.js';

describe('containerEnv', () => {
  it('keeps only allow-listed variables of the request, never the daemon environment', () => {
    process.env.AALIS_DAEMON_SECRET = 'from-the-daemon';
    const env = containerEnv({ LANG: 'C.UTF-8', LC_ALL: 'C', API_TOKEN: 'x', TOOL_MODE: 'fast', SSH_AUTH_SOCK: '/s' }, ['TOOL_*']);
    expect(env).toEqual({ LANG: 'C.UTF-8', LC_ALL: 'C', TOOL_MODE: 'fast', PATH: CONTAINER_PATH, HOME: '/tmp' });
    expect(Object.values(env)).not.toContain('from-the-daemon');
  });

  it('never passes DOCKER_* variables, the docker client would read them', () => {
    expect(containerEnv({ DOCKER_HOST: 'tcp://evil:2375' }, [])).not.toHaveProperty('DOCKER_HOST');
    expect(() => containerEnv({}, ['DOCKER_HOST'])).toThrow(/docker client reads them/);
  });

  it('refuses a malformed allow-list entry and a NUL in a value', () => {
    expect(() => containerEnv({}, ['BAD NAME'])).toThrow(/variable name/);
    expect(() => containerEnv({ LANG: 'a\0b' }, [])).toThrow(/NUL/);
  });
});
