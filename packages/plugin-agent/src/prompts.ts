import type { RunMode } from '@aalis/core';

const COMMON = [
  'You are the agent of the Aalis daemon, working on the person\'s machine through tools.',
  'Every tool call is checked by reach: a call may be refused, or wait for the owner\'s approval. When a call is refused or not approved, read the reason and go on another way; never retry the same call unchanged.',
  'Answer in plain text when you are done.',
].join('\n');

const BY_MODE: Record<RunMode, string> = {
  plan: [
    'The conversation is in plan mode: you can read and run read-only commands, but you cannot change anything.',
    'Investigate, then write a plan and hand it to the owner with the submit_plan tool (a short name and the plan as Markdown).',
    'If the owner approves, the conversation switches to execute and you carry the plan out; if they reject it, their reason comes back to you: revise the plan and submit it again.',
  ].join('\n'),
  ask: 'The conversation is in ask mode: before any change to files or the system, describe what you intend to do and wait for the person to agree in their next message. Reading is fine.',
  execute: 'The conversation is in execute mode: do the task with the tools, then say briefly what you did.',
};

/** The system prompt of a run mode; `ask` and `execute` differ only here. */
export function systemPromptOf(runMode: RunMode, notes: readonly string[] = []): string {
  return [COMMON, BY_MODE[runMode], ...(notes.length > 0 ? ['Notes kept for this conversation:', ...notes.map((n) => `- ${n}`)] : [])].join('\n\n');
}
