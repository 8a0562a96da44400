import { join } from 'node:path';
import { z } from 'zod';
import { definePlugin } from './plugin.js';
import { CONVERSATION_MAX_BYTES, RESIDENT_CONVERSATIONS, Sessions, sessions } from './sessions.js';
import { DurableStore } from './store.js';

/** Provides `sessions`; persists them under `dataDir/sessions` when the kernel has a data dir. */
export const sessionsPlugin = definePlugin({
  name: 'sessions',
  provides: [sessions],
  config: z
    .object({
      persist: z.boolean().default(true),
      /** The most a conversation's record holds before a person's next message archives its oldest messages (bytes of JSON). */
      maxConversationBytes: z.number().int().min(64 * 1024).default(CONVERSATION_MAX_BYTES),
      /** The most conversations held in memory besides those calls under way hold (persisted ones only: the rest are read again when used). */
      residentConversations: z.number().int().min(1).default(RESIDENT_CONVERSATIONS),
    })
    .default({ persist: true, maxConversationBytes: CONVERSATION_MAX_BYTES, residentConversations: RESIDENT_CONVERSATIONS }),
  async apply(ctx, config) {
    const store = config.persist && ctx.dataDir ? await DurableStore.open(join(ctx.dataDir, 'sessions')) : undefined;
    const service = new Sessions(store, (event) => ctx.emit('session/settings-changed', event), config.maxConversationBytes, config.residentConversations);
    await service.load();
    ctx.provide(sessions, service);
  },
});
