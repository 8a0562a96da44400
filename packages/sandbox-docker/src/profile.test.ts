import { describe, expect, it } from 'vitest';
import { BUILDER_TIMEOUT_MS, effectiveRiskLevel, PROFILE_PRESETS, resolveProfile } from './profile.js';

describe('profiles', () => {
  it.each([
    ['stdio', 'none', 'policy', undefined],
    ['network', 'default', 'policy', undefined],
    ['builder', 'none', 'host', BUILDER_TIMEOUT_MS],
  ] as const)('%s: network %s, identity %s, timeout cap %s', (name, network, identity, cap) => {
    const resolved = resolveProfile({ profile: name });
    expect(resolved.kind).toBe('container');
    if (resolved.kind !== 'container') return;
    expect(resolved.profile.network).toBe(network);
    expect(resolved.profile.identity).toBe(identity);
    expect(resolved.profile.maxTimeoutMs).toBe(cap);
  });

  it('defaults to local, as 002 says, and applies the limits of the tool spec', () => {
    expect(resolveProfile({}).kind).toBe('local');
    const resolved = resolveProfile({ profile: 'stdio', memory: '128m', cpus: '0.25', pids_limit: 16, read_only: true });
    expect(resolved).toMatchObject({ kind: 'container', profile: { memory: '128m', cpus: '0.25', pidsLimit: 16 } });
    expect(PROFILE_PRESETS.stdio.memory).toBe('256m');
  });

  it.each([
    [{ profile: 'stdio', network: 'default' }, /profile stdio is offline/],
    [{ profile: 'builder', network: 'default' }, /profile builder is offline/],
    [{ profile: 'stdio', read_only: false }, /read_only cannot be turned off/],
    [{ profile: 'stdio', memory: '1t' }, /memory is a number/],
    [{ profile: 'stdio', memory: '1k' }, /between 6m and 16g/],
    [{ profile: 'stdio', privileged: true }, /privileged/],
    [{ profile: 'vm' }, /profile/],
  ])('refuses %j', (spec, message) => {
    expect(() => resolveProfile(spec)).toThrow(message);
  });

  it.each([
    [{ declared: 'low', profile: 'stdio', generated: false }, 'low'],
    [{ declared: 'low', profile: 'stdio', generated: true }, 'high'],
    [{ declared: 'medium', profile: 'builder', generated: false }, 'high'],
    [{ declared: 'medium', profile: 'network', generated: false }, 'medium'],
  ] as const)('risk of %j is %s', (tool, expected) => {
    expect(effectiveRiskLevel(tool)).toBe(expected);
  });
});
