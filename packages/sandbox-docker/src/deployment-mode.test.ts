import { describe, expect, it } from 'vitest';
import { deploymentModeFromEnv } from './deployment-mode.js';

describe('deploymentModeFromEnv', () => {
  it.each([
    [{}, 'host'],
    [{ AALIS_DEPLOYMENT: 'docker' }, 'docker'],
    [{ TERMINAL_SANDBOX_MODE: 'web' }, 'docker'],
    [{ TERMINAL_SANDBOX_MODE: 'HOST' }, 'host'],
    [{ AALIS_DEPLOYMENT: 'docker', TERMINAL_SANDBOX_MODE: 'web' }, 'docker'],
  ])('%j -> %s', (env, mode) => {
    expect(deploymentModeFromEnv(env)).toBe(mode);
  });

  it('refuses an unknown mode and two variables that disagree', () => {
    expect(() => deploymentModeFromEnv({ AALIS_DEPLOYMENT: 'vm' })).toThrow(/AALIS_DEPLOYMENT=vm is not a deployment mode; use host or docker/);
    expect(() => deploymentModeFromEnv({ AALIS_DEPLOYMENT: 'host', TERMINAL_SANDBOX_MODE: 'docker' })).toThrow(/disagree/);
  });
});
