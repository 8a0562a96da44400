import { z } from 'zod';

/** Config of the agent plugin. */
export const AgentConfigSchema = z
  .object({
    /** Model replies per turn before the turn ends as failed. */
    maxSteps: z.number().int().min(1).max(500).default(40),
    /** A tool result longer than this is cut (the end kept off) before the model reads it. */
    toolResultMaxChars: z.number().int().min(200).max(1_000_000).default(20_000),
  })
  .strict()
  .prefault({});
/** Config of the agent plugin, validated with defaults. */
export type AgentConfig = z.output<typeof AgentConfigSchema>;
