import { reach, sandbox } from '@aalis/api-reach';
import { type AnyTool, definePlugin, tools } from '@aalis/core';
import { editFileTool, listDirTool, movePathTool, readFileTool, writeFileTool } from './files.js';
import { commandTools } from './run-command.js';

/**
 * Registers the built-in tools and gives every tool call its credential: an extender on the
 * dispatcher asks `reach.forCall` for each call's turn. Shell commands use whichever backend
 * provides `sandbox`; without one, sandboxed tiers refuse to run commands.
 */
export const builtinToolsPlugin = definePlugin({
  name: 'builtin-tools',
  inject: [tools, reach],
  optional: [sandbox],
  apply(ctx) {
    const dispatcher = ctx.get(tools);
    const reachService = ctx.get(reach);
    ctx.onDispose(dispatcher.extend(async (call) => ({ credential: await reachService.forCall(call.turn) })));
    const all: AnyTool[] = [readFileTool, listDirTool, writeFileTool, editFileTool, movePathTool, ...commandTools({ sandbox: () => ctx.maybe(sandbox) })];
    for (const tool of all) ctx.onDispose(dispatcher.register(tool));
  },
});
