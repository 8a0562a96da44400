import { reach, sandbox } from '@aalis/api-reach';
import { join } from 'node:path';
import { type AnyTool, definePlugin, TempJournal, tools } from '@aalis/core';
import { editFileTool, listDirTool, movePathTool, readFileTool, writeFileTool } from './files.js';
import { BackgroundJobs } from './background-jobs.js';
import { commandTools, type RunCommandResult } from './run-command.js';

/**
 * Registers the built-in tools and gives every tool call its credential: an extender on the
 * dispatcher asks `reach.forCall` for each call's turn. Shell commands use whichever backend
 * provides `sandbox`; without one, sandboxed tiers refuse to run commands. The file tools write
 * through core's safe file layer, their temp files journalled under `<dataDir>/builtin-tools`.
 */
export const builtinToolsPlugin = definePlugin({
  name: 'builtin-tools',
  inject: [tools, reach],
  optional: [sandbox],
  async apply(ctx) {
    const dispatcher = ctx.get(tools);
    const reachService = ctx.get(reach);
    // Temp files a killed daemon left anywhere in a workspace are removed here, before any call.
    const tempJournal = ctx.dataDir === undefined ? undefined : await TempJournal.open(join(ctx.dataDir, 'builtin-tools'));
    ctx.onDispose(dispatcher.extend(async (call) => ({ credential: await reachService.forCall(call.turn), ...(tempJournal ? { tempJournal } : {}) })));
    // Background commands are closed when their conversation's tier moves between the sandbox and
    // the host, or its main directory moves: either way the place they started in no longer holds.
    const jobs = new BackgroundJobs<RunCommandResult>();
    ctx.on('session/settings-changed', (event) => void jobs.onSettingsChanged(event));
    ctx.on('reach/main-directory-changed', (event) => void jobs.onMainDirectoryChanged(event));
    ctx.onDispose(() => jobs.closeAll('the daemon is stopping'));
    const all: AnyTool[] = [readFileTool, listDirTool, writeFileTool, editFileTool, movePathTool, ...commandTools({ sandbox: () => ctx.maybe(sandbox) }, jobs)];
    for (const tool of all) ctx.onDispose(dispatcher.register(tool));
  },
});
