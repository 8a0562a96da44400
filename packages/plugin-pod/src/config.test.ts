import { describe, expect, it } from 'vitest';
import { PodConfigSchema } from './config.js';


describe('the pod config', () => {
  it('has the defaults the specification asks for', () => {
    const c = PodConfigSchema.parse({});
    expect(c.sandboxRoot).toBeUndefined(); // never defaulted
    expect(c.allowWrites).toBe(true);
    expect(c.tools).toEqual(['read_file', 'list_dir', 'write_file', 'copy_into_sandbox', 'run_python']); // Node and shell opt-in
    expect(c.timeoutMs).toBe(15 * 60_000);
    expect(c.readContext).toBe(true);
    expect(c.return).toEqual({ kinds: ['conclusion', 'file', 'summary', 'status'], default: 'summary', maxChars: 1500 });
    expect(c.defaultSubdir).toBeUndefined();
    expect(c.cleanup).toEqual({ policy: 'manual', maxAgeHours: 168, intervalMinutes: 60 });
    expect(c.export).toEqual({ enabled: true, allowRemember: false, confirmTtlMs: 600_000 });
    expect(c.network).toBe('off');
  });

  const bad: [string, unknown, RegExp][] = [
    ['an unknown tool', { tools: ['rm_rf'] }, /tools/],
    ['a subdir that climbs', { defaultSubdir: '../x' }, /defaultSubdir/],
    ['an absolute subdir', { defaultSubdir: '/etc' }, /defaultSubdir/],
    ['a zero timeout', { timeoutMs: 0 }, /timeoutMs/],
    ['no return kind', { return: { kinds: [] } }, /return\.kinds/],
    ['an unknown field', { sandboxroot: '/x' }, /sandboxroot/],
    ['a model URL that is no URL', { model: { baseURL: 'localhost' } }, /model\.baseURL/],
    ['a clean-up policy that does not exist', { cleanup: { policy: 'never' } }, /cleanup\.policy/],
  ];
  for (const [name, value, field] of bad) {
    it(`refuses ${name}, naming the field`, () => {
      const r = PodConfigSchema.safeParse({ ...(value as object) });
      expect(r.success).toBe(false);
      const fields = r.error!.issues.map((i) => i.path.join('.') + (i.code === 'unrecognized_keys' ? ` ${(i as { keys: string[] }).keys.join(',')}` : '')).join(' ');
      expect(fields).toMatch(field);
    });
  }

  it('refuses keys it does not know, such as the old host section (the lists come from the reach plugin now)', () => {
    const result = PodConfigSchema.safeParse({ host: { install: '/opt/aalis', form: 'npm' } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/host/);
  });
});
