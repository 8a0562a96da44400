import { approval } from './approval.js';
import { definePlugin } from './plugin.js';
import { ToolDispatcher, tools } from './tools.js';

/** Provides `tools`; the high-risk gate asks the `approval` service when one runs. */
export const toolsPlugin = definePlugin({
  name: 'tools',
  provides: [tools],
  optional: [approval],
  apply(ctx) {
    ctx.provide(tools, new ToolDispatcher({ approval: () => ctx.maybe(approval) }));
  },
});
