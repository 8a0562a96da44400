import { definePlugin, defineService } from '@aalis/core';
import type { ModelProvider } from './messages.js';
import { ModelConfigSchema, modelOf } from './model-config.js';
import { ModelError } from './model-error.js';

/** The model service: one client the main agent, the pod's agent and the AI reviewer share. */
export const model = defineService<ModelProvider>('model');

/**
 * Provides {@link model} from its config. Without `baseURL` and `model` it still provides the
 * service, one that answers every request with a `not-configured` {@link ModelError}, so a turn
 * gets a clear error in its conversation instead of a missing service.
 */
export const modelPlugin = definePlugin({
  name: 'model',
  provides: [model],
  config: ModelConfigSchema.prefault({}),
  apply(ctx, config) {
    const client = modelOf(config);
    if (client) {
      ctx.provide(model, client);
      return;
    }
    ctx.provide(model, {
      async complete() {
        throw new ModelError(
          'not-configured',
          'no model is configured, so nothing can answer.',
          'set "model": { "baseURL": "<an OpenAI-compatible …/v1>", "model": "<name>", "apiKeyEnv": "<ENV VAR holding the key>" } in the config and restart the daemon',
        );
      },
    });
  },
});
