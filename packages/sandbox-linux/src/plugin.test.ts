import { sandbox } from '@aalis/api-reach';
import { createKernel } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { linuxSandboxPlugin } from './plugin.js';
import { LinuxSandbox } from './service.js';

describe('linuxSandboxPlugin', () => {
  it('provides the sandbox service with this backend', async () => {
    const kernel = createKernel().use(linuxSandboxPlugin, { maxScanEntries: 1000 });
    await kernel.start();
    const service = kernel.get(sandbox);
    expect(service).toBeInstanceOf(LinuxSandbox);
    expect(service.backend).toBe('linux');
    await kernel.stop();
  });

  it('passes hostModel on: look is what probe() then says; an unknown model fails the plugin', async () => {
    const kernel = createKernel().use(linuxSandboxPlugin, { hostModel: 'look' });
    await kernel.start();
    const check = (await kernel.get(sandbox).probe()).checks.find((c) => c.name === 'host-model');
    expect(check?.detail).toMatch(/^look-based \(chosen in the settings\)/);
    await kernel.stop();
    const bad = createKernel().use(linuxSandboxPlugin, { hostModel: 'snapshot' } as never);
    expect((await bad.start()).find((p) => p.name === 'sandbox-linux')?.state).toBe('failed');
    await bad.stop();
  });

  it('fails that plugin alone on a bad config', async () => {
    const kernel = createKernel().use(linuxSandboxPlugin, { tmpDir: 'relative' } as never);
    const status = await kernel.start();
    expect(status.find((p) => p.name === 'sandbox-linux')?.state).toBe('failed');
    await kernel.stop();
  });
});
