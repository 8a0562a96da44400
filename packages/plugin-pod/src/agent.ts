import type { SandboxPolicy, SandboxService } from '@aalis/api-reach';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH, type TempRecorder } from '@aalis/core';
import { AGENT_TOOLS, type AgentTool, modelToolsOf } from './agent-tools.js';
import type { ModelMessage, ModelProvider } from '@aalis/model';
import type { NewLogEntry, TaskDirs, TaskState } from './task.js';

const MODEL_TEXT_LIMIT = 12_000;

/** What one run of the agent needs. */
export interface AgentRun {
  readonly task: string;
  readonly dirs: TaskDirs;
  /** The main conversation's finished turns, or undefined when context reading is off. */
  readonly context: string | undefined;
  readonly tools: readonly AgentTool['name'][];
  readonly model: ModelProvider;
  readonly maxSteps: number;
  readonly sandbox: SandboxService;
  readonly policy: SandboxPolicy;
  readonly env: Readonly<Record<string, string>>;
  readonly commandTimeoutMs: number;
  readonly signal: AbortSignal;
  /** Where host-side writes record their temp files. */
  readonly journal?: TempRecorder;
  readonly log: (entry: NewLogEntry) => Promise<void>;
  readonly step: (steps: number, progress: string) => void;
}

/** How the agent ended. */
export interface AgentResult {
  readonly state: Extract<TaskState, 'succeeded' | 'failed'>;
  readonly conclusion?: string;
  readonly summary?: string;
  readonly error?: string;
}

function systemPrompt(run: AgentRun): string {
  return [
    'You are the agent of an isolated side task (an "Isolation Pod"), outside the main conversation.',
    `Your working directory is ${run.dirs.work}. It is the only place you can write: every file you create goes there (relative paths do).`,
    'You may read anything readable on this machine; everything outside your directory is read-only.',
    `Your tools: ${run.tools.join(', ')}, finish. Code runs in a sandbox, in your working directory.`,
    'When you are done, call finish with your conclusion, a one-line summary and whether you succeeded; or answer without a tool call.',
  ].join('\n');
}

/** Runs the tool-using loop until the model answers without tools, calls `finish`, or runs out of steps. */
export async function runAgent(run: AgentRun): Promise<AgentResult> {
  const offered = new Set<string>([...run.tools, 'finish']);
  const messages: ModelMessage[] = [{ role: 'system', content: systemPrompt(run) }];
  if (run.context !== undefined && run.context !== '') {
    messages.push({
      role: 'system',
      content: `The main conversation so far (read-only background: its references, context and conclusions; you cannot change it):\n${run.context}`,
    });
  }
  messages.push({ role: 'user', content: run.task });
  const modelTools = modelToolsOf([...run.tools, 'finish'] as AgentTool['name'][]);

  for (let step = 1; step <= run.maxSteps; step++) {
    const reply = await run.model.complete({ messages, tools: modelTools, signal: run.signal });
    await run.log({ kind: 'model', content: reply.content, toolCalls: reply.toolCalls.map((c) => c.function.name) });
    run.step(step, reply.toolCalls.length > 0 ? `calling ${reply.toolCalls.map((c) => c.function.name).join(', ')}` : 'answered');
    messages.push({ role: 'assistant', content: reply.content === '' ? null : reply.content, ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls } : {}) });
    if (reply.toolCalls.length === 0) return { state: 'succeeded', conclusion: reply.content };

    for (const call of reply.toolCalls) {
      const name = call.function.name;
      let params: unknown;
      try {
        params = JSON.parse(call.function.arguments || '{}');
        // the task's log writes the value as JSON: nested past the limit, that would overflow the stack
        if (jsonNestsDeeperThan(params)) params = undefined;
      } catch {
        params = undefined;
      }
      await run.log({ kind: 'tool-call', callId: call.id, tool: name, params: params ?? call.function.arguments.slice(0, 2_000) });
      if (!offered.has(name) || !(name in AGENT_TOOLS)) {
        const message = `the tool '${name}' is not allowed in this pod (allowed: ${[...offered].join(', ')}); nothing ran.`;
        await run.log({ kind: 'refused', callId: call.id, tool: name, rule: 'tool-not-allowed', message });
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ ok: false, error: message }) });
        continue;
      }
      if (params === undefined) {
        const message = `the arguments of '${name}' are not valid JSON, or nest arrays and objects deeper than ${MAX_JSON_DEPTH} levels; nothing ran.`;
        await run.log({ kind: 'tool-result', callId: call.id, tool: name, ok: false, error: message });
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ ok: false, error: message }) });
        continue;
      }
      const tool = AGENT_TOOLS[name as AgentTool['name']];
      const outcome = await tool.run(
        { dirs: run.dirs, policy: run.policy, env: run.env, sandbox: run.sandbox, commandTimeoutMs: run.commandTimeoutMs, signal: run.signal, ...(run.journal ? { journal: run.journal } : {}) },
        params,
      );
      const runLog = outcome.run
        ? {
            exitCode: outcome.run.exitCode,
            signal: outcome.run.signal,
            timedOut: outcome.run.timedOut,
            stdout: outcome.run.stdout,
            stderr: outcome.run.stderr,
            truncated: outcome.run.truncated,
            writeDenied: outcome.run.writeDenied,
            deniedWrites: [...outcome.run.deniedWrites],
            ...(outcome.run.movedAside && outcome.run.movedAside.length > 0 ? { movedAside: [...outcome.run.movedAside] } : {}),
          }
        : undefined;
      if (outcome.ok) {
        await run.log({ kind: 'tool-result', callId: call.id, tool: name, ok: true, value: outcome.value, ...(runLog ? { run: runLog } : {}) });
      } else {
        if (outcome.refused) await run.log({ kind: 'refused', callId: call.id, tool: name, rule: outcome.rule, message: outcome.message });
        await run.log({ kind: 'tool-result', callId: call.id, tool: name, ok: false, error: outcome.message, ...(runLog ? { run: runLog } : {}) });
      }
      if (outcome.ok && name === 'finish') {
        const f = outcome.value as { conclusion: string; summary?: string; success: boolean };
        return {
          state: f.success ? 'succeeded' : 'failed',
          conclusion: f.conclusion,
          ...(f.summary !== undefined ? { summary: f.summary } : {}),
          ...(f.success ? {} : { error: `the agent reported failure: ${f.summary ?? f.conclusion}` }),
        };
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content: forModel(outcome, runLog) });
    }
  }
  return { state: 'failed', error: `the agent did not finish within ${run.maxSteps} model replies (model.maxSteps).` };
}

function forModel(outcome: { ok: boolean; value?: unknown; message?: string }, run: { stdout: string; stderr: string; exitCode: number | null; timedOut: boolean } | undefined): string {
  const cut = (s: string) => (s.length > MODEL_TEXT_LIMIT ? `${s.slice(0, MODEL_TEXT_LIMIT)}… (${s.length - MODEL_TEXT_LIMIT} more characters)` : s);
  const body = run
    ? { ok: outcome.ok, exitCode: run.exitCode, timedOut: run.timedOut, stdout: cut(run.stdout), stderr: cut(run.stderr), ...(outcome.ok ? {} : { error: outcome.message }) }
    : outcome.ok
      ? { ok: true, value: outcome.value }
      : { ok: false, error: outcome.message };
  return cut(JSON.stringify(body));
}
