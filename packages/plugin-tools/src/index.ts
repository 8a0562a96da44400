export { credentialOf, requireOrThrow } from './credential.js';
export { editFileTool, listDirTool, movePathTool, readFileTool, writeFileTool } from './files.js';
export { type CommandRunResult, runUnsandboxed } from './unsandboxed-run.js';
export { builtinToolsPlugin } from './plugin.js';
export { CommandRefusedError, commandTools, type RunCommandResult, type RunDeps, RunCommandParams, runCommand } from './run-command.js';
export { type CommandAsk, commandPolicyOf, MAX_OUTPUT, sandboxRequestOf } from './sandbox-request.js';
export { isNeverWritten, NEVER_WRITTEN, neverWrittenMessage } from './secrets.js';
export { grantRefusedWrites, MAX_REFUSED_ASKS, needOf, REFUSAL_RULES, type RefusalRule, type RefusedWrite, type RetryPlan, type WriteNeed } from './write-retry.js';
export { hostToldLandingOf } from './landing-links.js';
