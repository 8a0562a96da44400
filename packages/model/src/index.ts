export { type ChatCompletionsOptions, createChatCompletionsClient } from './chat-completions.js';
export type { ModelMessage, ModelProvider, ModelReply, ModelRequest, ModelTool, ModelToolCall } from './messages.js';
export { type ModelConfig, ModelConfigSchema, modelOf } from './model-config.js';
export { MODEL_ERROR_REASONS, ModelError, type ModelErrorReason } from './model-error.js';
export { model, modelPlugin } from './model-plugin.js';
export { type Script, type ScriptedModel, type ScriptStep, type SeenRequest, startScriptedModel } from './scripted-model.js';
export { sseData } from './sse-reader.js';
