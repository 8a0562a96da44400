// `aalis serve --help` is where a person finds how to configure the daemon: every key the config
// accepts is listed (the model among them, without which the agent cannot answer).
import { describe, expect, it } from 'vitest';
import { DaemonConfigSchema } from './daemon/config.js';
import { SERVE_HELP } from './serve.js';

describe('aalis serve --help', () => {
  it.each(Object.keys(DaemonConfigSchema.shape))('lists the config key "%s"', (key) => {
    expect(SERVE_HELP).toContain(`"${key}":`);
  });

  it('says the agent needs a model, and where to chat with it', () => {
    expect(SERVE_HELP).toMatch(/agent needs a model: the config's "model"/);
    expect(SERVE_HELP).toContain('aalis chat');
    expect(SERVE_HELP).toContain('chat pane');
  });
});
