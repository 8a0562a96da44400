export { type Binding, type MainDirectoryChangedEvent, type Place, type ReachBindings, type ReachInspector, reachBindings, reachInspector } from './bindings.js';
export { gitDirsOf } from './git-dirs.js';
export { type ReachHost, reachHostOf } from './host.js';
export { captureLoginEnv, type LoginEnv, sandboxEnvOf } from './login-env.js';
export { denialMessage, describeAsk, describeRequest, notApprovedMessage } from './messages.js';
export { type ReachConfig, ReachConfigSchema, reachPlugin } from './plugin.js';
export { realPathOf, realPathOfSync } from './real-path.js';
