import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { KernelError } from './errors.js';
import { createKernel } from './kernel.js';
import { definePlugin } from './plugin.js';
import { defineService } from './service.js';

const alpha = defineService<{ hello(): string }>('alpha');
const beta = defineService<{ twice(): string }>('beta');
const gamma = defineService<{ thrice(): string }>('gamma');

const provideAlpha = definePlugin({
  name: 'provide-alpha',
  provides: [alpha],
  apply(ctx) {
    ctx.provide(alpha, { hello: () => 'hi' });
  },
});
const provideBeta = definePlugin({
  name: 'provide-beta',
  provides: [beta],
  inject: [alpha],
  apply(ctx) {
    const a = ctx.get(alpha);
    ctx.provide(beta, { twice: () => a.hello() + a.hello() });
  },
});

describe('services', () => {
  it('descriptors are frozen and identified by name', () => {
    const again = defineService<{ hello(): string }>('alpha');
    expect(Object.isFrozen(alpha)).toBe(true);
    expect(again.name).toBe(alpha.name);
    const kernel = createKernel().use(provideAlpha);
    return kernel.start().then(() => expect(kernel.get(again).hello()).toBe('hi'));
  });

  it('rejects names that are not service names', () => {
    expect(() => defineService('Has Spaces')).toThrow(/not a service name/);
  });

  it('get fails clearly for a service nobody provides; maybe returns undefined', async () => {
    const kernel = createKernel();
    await kernel.start();
    expect(() => kernel.get(alpha)).toThrow(/service 'alpha' is not provided/);
    expect(kernel.maybe(alpha)).toBeUndefined();
  });
});

describe('ordering', () => {
  it('starts providers before the plugins that inject them, whatever the registration order', async () => {
    const started: string[] = [];
    const kernel = createKernel()
      .use(
        definePlugin({
          ...provideBeta,
          apply: (ctx) => {
            started.push('beta');
            return provideBeta.apply(ctx, undefined);
          },
        }),
      )
      .use(
        definePlugin({
          ...provideAlpha,
          apply: (ctx) => {
            started.push('alpha');
            return provideAlpha.apply(ctx, undefined);
          },
        }),
      );
    await kernel.start();
    expect(started).toEqual(['alpha', 'beta']);
    expect(kernel.get(beta).twice()).toBe('hihi');
  });

  it('names the chain when a provider is missing', async () => {
    const kernel = createKernel()
      .use(definePlugin({ name: 'top', inject: [beta], apply() {} }))
      .use(provideBeta);
    const error = await kernel.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KernelError);
    expect((error as KernelError).code).toBe('missing-provider');
    expect((error as KernelError).message).toContain("'top' -> 'provide-beta' -> 'alpha'");
  });

  it('names the cycle', async () => {
    const kernel = createKernel()
      .use(definePlugin({ name: 'a', provides: [alpha], inject: [gamma], apply() {} }))
      .use(definePlugin({ name: 'b', provides: [beta], inject: [alpha], apply() {} }))
      .use(definePlugin({ name: 'c', provides: [gamma], inject: [beta], apply() {} }));
    const error = (await kernel.start().catch((e: unknown) => e)) as KernelError;
    expect(error.code).toBe('dependency-cycle');
    expect(error.message).toContain("'a' -(gamma)-> 'c' -(beta)-> 'b' -(alpha)-> 'a'");
  });

  it('refuses two providers of one service and a plugin added twice', async () => {
    const twice = createKernel().use(provideAlpha).use(definePlugin({ ...provideAlpha, name: 'other-alpha' }));
    await expect(twice.start()).rejects.toThrow(/provided by both 'provide-alpha' and 'other-alpha'/);
    expect(() => createKernel().use(provideAlpha).use(provideAlpha)).toThrow(/added twice/);
  });

  it('starts a plugin without an optional service that nobody provides', async () => {
    let seen: unknown = 'unset';
    const kernel = createKernel().use(
      definePlugin({
        name: 'lonely',
        optional: [alpha],
        apply(ctx) {
          seen = ctx.maybe(alpha);
        },
      }),
    );
    await kernel.start();
    expect(seen).toBeUndefined();
    expect(kernel.status()).toEqual([{ name: 'lonely', state: 'running' }]);
  });

  it('ctx.get refuses a service the plugin did not declare', async () => {
    const kernel = createKernel()
      .use(provideAlpha)
      .use(
        definePlugin({
          name: 'sneaky',
          apply(ctx) {
            ctx.get(alpha);
          },
        }),
      );
    await kernel.start();
    const status = kernel.status().find((s) => s.name === 'sneaky');
    expect(status).toMatchObject({ state: 'failed', cause: expect.stringContaining('without declaring it') });
  });
});

describe('containment', () => {
  it.each([
    ['sync', () => { throw new Error('boom'); }],
    ['async', async () => { await Promise.resolve(); throw new Error('boom'); }],
  ] as const)('a %s throw fails the plugin and its dependents, the rest run', async (_kind, apply) => {
    const kernel = createKernel()
      .use(definePlugin({ name: 'broken-alpha', provides: [alpha], apply }))
      .use(provideBeta)
      .use(definePlugin({ name: 'uses-beta', inject: [beta], apply() {} }))
      .use(definePlugin({ name: 'optional-alpha', optional: [alpha], apply() {} }))
      .use(definePlugin({ name: 'independent', provides: [gamma], apply: (ctx) => ctx.provide(gamma, { thrice: () => 'x' }) }));
    const status = await kernel.start();
    const byName = Object.fromEntries(status.map((s) => [s.name, s]));
    expect(byName['broken-alpha']).toEqual({ name: 'broken-alpha', state: 'failed', cause: 'apply threw: boom' });
    expect(byName['provide-beta']).toMatchObject({ state: 'failed', cause: expect.stringContaining("'broken-alpha' failed: apply threw: boom") });
    expect(byName['uses-beta']).toMatchObject({ state: 'failed', cause: expect.stringContaining("'provide-beta' failed") });
    expect(byName['optional-alpha']).toEqual({ name: 'optional-alpha', state: 'running' });
    expect(byName.independent).toEqual({ name: 'independent', state: 'running' });
    expect(() => kernel.get(alpha)).toThrow(/provides it but failed/);
  });

  it('a bad config fails that plugin with the plugin, the field and the expectation', async () => {
    let applied = false;
    const kernel = createKernel().use(
      definePlugin({
        name: 'configured',
        config: z.object({ owners: z.object({ qq: z.array(z.string()) }) }),
        apply() {
          applied = true;
        },
      }),
      { owners: { qq: 'alice' as unknown as string[] } },
    );
    const [status] = await kernel.start();
    expect(applied).toBe(false);
    expect(status).toMatchObject({ state: 'failed' });
    const cause = (status as { cause: string }).cause;
    expect(cause).toContain("plugin 'configured'");
    expect(cause).toContain("field 'owners.qq'");
    expect(cause).toMatch(/expected array/);
  });

  it('a plugin that declares a service but never provides it fails', async () => {
    const kernel = createKernel().use(definePlugin({ name: 'liar', provides: [alpha], apply() {} }));
    const [status] = await kernel.start();
    expect(status).toMatchObject({ state: 'failed', cause: expect.stringContaining("did not call ctx.provide") });
  });

  it('disposes what a failing plugin registered before it threw, and withdraws its services', async () => {
    const disposed: string[] = [];
    const kernel = createKernel().use(
      definePlugin({
        name: 'half',
        provides: [alpha, beta],
        apply(ctx) {
          ctx.provide(alpha, { hello: () => 'hi' });
          ctx.onDispose(() => void disposed.push('half'));
          throw new Error('second service failed');
        },
      }),
    );
    await kernel.start();
    expect(disposed).toEqual(['half']);
    expect(kernel.maybe(alpha)).toBeUndefined();
  });
});

describe('stop', () => {
  it('disposes in reverse start order and survives a disposer that throws', async () => {
    const disposed: string[] = [];
    const kernel = createKernel()
      .use(
        definePlugin({
          name: 'second',
          inject: [alpha],
          apply(ctx) {
            ctx.onDispose(() => void disposed.push('second:registered'));
            return () => {
              disposed.push('second:returned');
              throw new Error('disposer broke');
            };
          },
        }),
      )
      .use(
        definePlugin({
          name: 'first',
          provides: [alpha],
          apply(ctx) {
            ctx.provide(alpha, { hello: () => 'hi' });
            ctx.on('test/ping' as never, () => {});
            return async () => void disposed.push('first');
          },
        }),
      );
    await kernel.start();
    expect(kernel.events.listenerCount('test/ping' as never)).toBe(1);
    const report = await kernel.stop();
    expect(disposed).toEqual(['second:returned', 'second:registered', 'first']);
    expect(report.errors).toEqual([{ plugin: 'second', message: 'disposer broke' }]);
    expect(kernel.events.listenerCount('test/ping' as never)).toBe(0);
    expect(kernel.status().map((s) => s.state)).toEqual(['stopped', 'stopped']);
  });
});
