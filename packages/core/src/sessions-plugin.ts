import { join } from 'node:path';
import { z } from 'zod';
import { definePlugin } from './plugin.js';
import { Sessions, sessions } from './sessions.js';
import { DurableStore } from './store.js';

/** Provides `sessions`; persists them under `dataDir/sessions` when the kernel has a data dir. */
export const sessionsPlugin = definePlugin({
  name: 'sessions',
  provides: [sessions],
  config: z.object({ persist: z.boolean().default(true) }).default({ persist: true }),
  async apply(ctx, config) {
    const store = config.persist && ctx.dataDir ? await DurableStore.open(join(ctx.dataDir, 'sessions')) : undefined;
    const service = new Sessions(store, (event) => ctx.emit('session/settings-changed', event));
    await service.load();
    ctx.provide(sessions, service);
  },
});
