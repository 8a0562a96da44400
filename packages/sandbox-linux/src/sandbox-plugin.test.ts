import { sandbox, sandboxPlugin } from '@aalis/api-reach';
import { createKernel } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { createLinuxSandbox, LinuxSandbox } from './service.js';

// A kernel gets this backend the one way every backend is wired: api-reach's sandboxPlugin
// around the service createLinuxSandbox builds (the daemon and `aalis exec` do the same).
describe('createLinuxSandbox in a kernel', () => {
  it('provides the sandbox service with this backend', async () => {
    const kernel = createKernel().use(sandboxPlugin(createLinuxSandbox({ scan: { maxEntries: 1000 } })));
    const status = await kernel.start();
    expect(status.find((p) => p.name === 'sandbox-linux')?.state).toBe('running');
    const service = kernel.get(sandbox);
    expect(service).toBeInstanceOf(LinuxSandbox);
    expect(service.backend).toBe('linux');
    await kernel.stop();
  });

  it('passes hostModel on: look is what probe() then says', async () => {
    const kernel = createKernel().use(sandboxPlugin(createLinuxSandbox({ hostModel: 'look' })));
    await kernel.start();
    const check = (await kernel.get(sandbox).probe()).checks.find((c) => c.name === 'host-model');
    expect(check?.detail).toMatch(/^look-based \(chosen in the settings\)/);
    await kernel.stop();
  });
});
