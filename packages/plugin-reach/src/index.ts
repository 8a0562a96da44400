export { type Binding, type MainDirectoryChangedEvent, type Place, type ReachBindings, type ReachView, reachBindings, reachView } from './bindings.js';
export { gitDirsOf } from './git-dirs.js';
export { type ReachInstance, reachInstanceOf } from './instance.js';
export { captureLoginEnv, type LoginEnv, sandboxEnvOf } from './login-env.js';
export { denialMessage, describeAsk, describeRequest, notApprovedMessage } from './messages.js';
export { type ReachConfig, ReachConfigSchema, reachPlugin } from './plugin.js';
export { realPathOf, realPathOfSync } from './real-path.js';
export { ensureSessionTmp, sessionTmpOf } from './session-tmp.js';
export { type PathRefusedCode, PathRefusedError } from './path-refused.js';
