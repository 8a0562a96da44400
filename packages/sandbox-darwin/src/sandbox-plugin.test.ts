import { SandboxUnavailableError, sandbox, sandboxPlugin } from '@aalis/api-reach';
import { createKernel } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { readonlyPolicy } from '../test/policies.js';
import { createDarwinSandbox } from './darwin-sandbox.js';

// A kernel gets this backend the one way every backend is wired: api-reach's sandboxPlugin around
// the service createDarwinSandbox builds.
describe.runIf(process.platform !== 'darwin')('createDarwinSandbox in a real kernel off macOS', () => {
  it('provides a sandbox service that refuses', async () => {
    const kernel = createKernel().use(sandboxPlugin(createDarwinSandbox()));
    const status = await kernel.start();
    expect(status.find((p) => p.name === 'sandbox-darwin')?.state).toBe('running');
    const service = kernel.get(sandbox);
    expect(service.backend).toBe('darwin');
    expect((await service.probe()).available).toBe(false);
    await expect(service.run({ argv: ['/bin/true'], cwd: '/', env: {}, timeoutMs: 1_000, policy: readonlyPolicy })).rejects.toBeInstanceOf(SandboxUnavailableError);
    await kernel.stop();
  });
});
