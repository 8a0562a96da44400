import { z } from 'zod';
import { createChatCompletionsClient } from './chat-completions.js';
import type { ModelProvider } from './messages.js';

/** Where the model is: any OpenAI-compatible chat-completions endpoint. All optional: unset means no model. */
export const ModelConfigSchema = z
  .object({
    /** e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
    baseURL: z.string().url().optional(),
    model: z.string().min(1).optional(),
    /** The key itself; prefer `apiKeyEnv`, so the key stays out of config files. */
    apiKey: z.string().min(1).optional(),
    /** Read the key from this environment variable when `apiKey` is not set. */
    apiKeyEnv: z.string().min(1).optional(),
    /** One request's limit. */
    requestTimeoutMs: z.number().int().min(100).max(30 * 60_000).default(120_000),
    temperature: z.number().min(0).max(2).optional(),
  })
  .strict();
/** Where the model is, validated with defaults. */
export type ModelConfig = z.output<typeof ModelConfigSchema>;

/** The client a config describes, or `undefined` when it names no endpoint or no model. */
export function modelOf(config: ModelConfig, env: NodeJS.ProcessEnv = process.env): ModelProvider | undefined {
  if (config.baseURL === undefined || config.model === undefined) return undefined;
  const apiKey = config.apiKey ?? (config.apiKeyEnv !== undefined ? env[config.apiKeyEnv] : undefined);
  return createChatCompletionsClient({
    baseURL: config.baseURL,
    model: config.model,
    requestTimeoutMs: config.requestTimeoutMs,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
  });
}
