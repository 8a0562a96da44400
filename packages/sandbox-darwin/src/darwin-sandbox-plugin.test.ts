import { sandbox, SandboxUnavailableError } from '@aalis/api-reach';
import { createKernel } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { readonlyPolicy } from '../test/policies.js';
import { darwinSandboxPlugin } from './darwin-sandbox-plugin.js';

describe.runIf(process.platform !== 'darwin')('darwinSandboxPlugin in a real kernel off macOS', () => {
  it('provides a sandbox service that refuses', async () => {
    const kernel = createKernel().use(darwinSandboxPlugin);
    await kernel.start();
    const service = kernel.get(sandbox);
    expect(service.backend).toBe('darwin');
    expect((await service.probe()).available).toBe(false);
    await expect(service.run({ argv: ['/bin/true'], cwd: '/', env: {}, timeoutMs: 1_000, policy: readonlyPolicy })).rejects.toBeInstanceOf(SandboxUnavailableError);
    await kernel.stop();
  });
});
