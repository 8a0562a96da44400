import { describe, expect, it } from 'vitest';
import { PodConfigSchema } from './config.js';


describe('the pod config (003 §4.8)', () => {
  it('has the defaults the specification asks for', () => {
    const c = PodConfigSchema.parse({});
    expect(c.sandboxRoot).toBeUndefined(); // §4.8.1: never defaulted
    expect(c.allowWrites).toBe(true); // §4.8.2
    expect(c.tools).toEqual(['read_file', 'list_dir', 'write_file', 'copy_into_sandbox', 'run_python']); // §4.8.3, Node and shell opt-in
    expect(c.timeoutMs).toBe(15 * 60_000); // §4.8.4
    expect(c.readContext).toBe(true); // §4.8.5
    expect(c.return).toEqual({ kinds: ['conclusion', 'file', 'summary', 'status'], default: 'summary', maxChars: 1500 }); // §4.8.6
    expect(c.defaultSubdir).toBeUndefined(); // §4.8.7
    expect(c.cleanup).toEqual({ policy: 'manual', maxAgeHours: 168, intervalMinutes: 60 }); // §4.8.8
    expect(c.export).toEqual({ enabled: true, allowRemember: false, confirmTtlMs: 600_000 }); // §4.8.9, §4.8.10
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
