import { describe, expect, it } from 'vitest';
import { policy, tempDir } from '../test/engine.js';
import { planMounts } from './mount-plan.js';
import { PROFILE_PRESETS } from './profile.js';
import { dockerRunArgs } from './run-args.js';

async function args(overrides: Partial<Parameters<typeof dockerRunArgs>[0]> = {}) {
  const ws = tempDir();
  const plan = await planMounts({ cwd: ws, policy: policy({ write: [ws] }) });
  return {
    ws,
    argv: dockerRunArgs({
      name: 'c1',
      image: 'img',
      profile: PROFILE_PRESETS.stdio,
      plan,
      identity: { kind: 'restricted' },
      network: 'none',
      cwd: ws,
      envNames: ['LANG'],
      labels: { a: 'b' },
      interactive: false,
      argv: ['sh', '-c', 'echo $LANG'],
      deadlineSeconds: 35,
      ...overrides,
    }),
  };
}

function flag(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
}

describe('dockerRunArgs', () => {
  it('carries the whole 002 baseline', async () => {
    const { argv, ws } = await args();
    expect(argv.slice(0, 2)).toEqual(['run', '--rm']);
    expect(flag(argv, '--cap-drop')).toBe('ALL');
    expect(flag(argv, '--security-opt')).toBe('no-new-privileges');
    expect(argv.filter((a) => a.startsWith('seccomp='))).toHaveLength(1);
    expect(argv).toContain('--read-only');
    expect(flag(argv, '--tmpfs')).toMatch(/^\/tmp:rw,nosuid,nodev,size=64m/);
    expect(flag(argv, '--memory')).toBe('256m');
    expect(flag(argv, '--memory-swap')).toBe('256m');
    expect(flag(argv, '--cpus')).toBe('0.5');
    expect(flag(argv, '--pids-limit')).toBe('64');
    expect(flag(argv, '--network')).toBe('none');
    expect(flag(argv, '--user')).toBe('10001:10001');
    expect(flag(argv, '--pull')).toBe('never');
    expect(flag(argv, '--mount')).toBe(`type=bind,source=${ws},target=${ws}`);
    expect(argv).toContain('--init');
    expect(argv.slice(-9)).toEqual(['--entrypoint', 'timeout', 'img', '-s', 'KILL', '35', 'sh', '-c', 'echo $LANG']);
  });

  it('passes env names only, never values, and never mounts the engine socket', async () => {
    const { argv } = await args();
    expect(flag(argv, '--env')).toBe('LANG');
    expect(argv.join(' ')).not.toMatch(/docker\.sock|LANG=/);
  });

  it('quotes mount paths holding commas so they stay one path', async () => {
    const { argv } = await args({ plan: { ...(await planMounts({ cwd: tempDir('a,b-'), policy: policy() })) } });
    expect(flag(argv, '--mount')).toMatch(/^type=bind,"source=.*a,b-.*","target=.*a,b-.*",readonly$/);
  });

  it('runs a host identity as its uid:gid and a network profile on the bridge', async () => {
    const { argv } = await args({ identity: { kind: 'host', uid: 1234, gid: 99 }, network: 'bridge', profile: PROFILE_PRESETS.network });
    expect(flag(argv, '--user')).toBe('1234:99');
    expect(flag(argv, '--network')).toBe('bridge');
  });
});
