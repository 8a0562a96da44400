import { describe, expect, it } from 'vitest';
import { AccessTierSchema, ApproverSchema, DEFAULT_SETTINGS, execPlaceOf, resolveSettings, type SessionSettings, SessionSettingsSchema } from './settings.js';

describe('axis aliases', () => {
  it.each([
    ['readonly', 'readonly'],
    ['read-only', 'readonly'],
    ['confirm', 'confirm'],
    ['approval', 'confirm'],
    ['workspace', 'workspace'],
    ['workspace-write', 'workspace'],
    ['full', 'full'],
    ['full-access', 'full'],
    ['unrestricted', 'full'],
  ])('tier %s is %s', (input, canonical) => {
    expect(AccessTierSchema.parse(input)).toBe(canonical);
  });

  it.each([
    ['approval', 'human'],
    ['auto_approval', 'reviewer'],
    ['none', 'none'],
  ])('approver %s is %s', (input, canonical) => {
    expect(ApproverSchema.parse(input)).toBe(canonical);
  });

  it('a bad tier lists what is accepted', () => {
    const result = AccessTierSchema.safeParse('root');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/expected one of readonly, confirm, workspace, full \(or an alias: read-only/);
  });
});

describe('execPlaceOf', () => {
  it.each([
    ['readonly', 'sandbox'],
    ['workspace', 'sandbox'],
    ['confirm', 'host'],
    ['full', 'host'],
  ] as const)('%s runs in the %s', (tier, place) => expect(execPlaceOf(tier)).toBe(place));
});

describe('resolveSettings', () => {
  const start: SessionSettings = { ...DEFAULT_SETTINGS, tier: 'full', boundary: 'deny' };

  it('plan forces readonly and remembers what to restore', () => {
    const result = resolveSettings(start, { runMode: 'plan' });
    expect(result).toEqual({ ok: true, settings: { ...start, runMode: 'plan', tier: 'readonly', restore: { tier: 'full', boundary: 'deny' } } });
  });

  it('leaving plan (the plan approved) restores the previous tier and boundary', () => {
    const planned = resolveSettings(start, { runMode: 'plan' });
    if (!planned.ok) throw new Error('unexpected');
    const executed = resolveSettings(planned.settings, { runMode: 'execute' });
    expect(executed).toEqual({ ok: true, settings: { ...start, runMode: 'execute' } });
    expect(SessionSettingsSchema.parse(executed.ok && executed.settings)).not.toHaveProperty('restore');
  });

  it('refuses raising the tier while in plan, and says what to do', () => {
    const planned = resolveSettings(start, { runMode: 'plan' });
    if (!planned.ok) throw new Error('unexpected');
    const result = resolveSettings(planned.settings, { tier: 'full' });
    expect(result).toMatchObject({ ok: false, rule: 'plan-locks-tier' });
    expect(!result.ok && result.message).toMatch(/Approve the plan or switch the run mode/);
  });

  it('plan refuses what readonly would ask (boundary deny), and leaving it gives the boundary back', () => {
    const planned = resolveSettings(DEFAULT_SETTINGS, { runMode: 'plan' });
    expect(planned).toEqual({ ok: true, settings: { ...DEFAULT_SETTINGS, runMode: 'plan', tier: 'readonly', boundary: 'deny', restore: { tier: 'workspace', boundary: 'ask' } } });
    if (!planned.ok) throw new Error('unexpected');
    expect(resolveSettings(planned.settings, { runMode: 'execute' })).toEqual({ ok: true, settings: DEFAULT_SETTINGS });
  });

  it('entering plan with a tier in the same change still ends readonly, restoring that tier later', () => {
    const result = resolveSettings(DEFAULT_SETTINGS, { runMode: 'plan', tier: 'confirm' });
    expect(result).toMatchObject({ ok: true, settings: { tier: 'readonly', restore: { tier: 'confirm' } } });
  });

  it('other changes pass through', () => {
    expect(resolveSettings(DEFAULT_SETTINGS, { approver: 'none', tier: 'readonly' })).toEqual({
      ok: true,
      settings: { ...DEFAULT_SETTINGS, approver: 'none', tier: 'readonly' },
    });
  });
});
