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

  it('fails that plugin alone on a bad config', async () => {
    const kernel = createKernel().use(linuxSandboxPlugin, { tmpDir: 'relative' } as never);
    const status = await kernel.start();
    expect(status.find((p) => p.name === 'sandbox-linux')?.state).toBe('failed');
    await kernel.stop();
  });
});
