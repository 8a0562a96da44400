import type { ReturnKind } from './config.js';
import type { TaskRecord } from './task.js';

/** Cuts text to a limit, saying it was cut. */
export function shorten(text: string, max: number): string {
  const t = text.trim();
  if (t.length <= max) return t;
  return `${t.slice(0, Math.max(0, max - 12)).trimEnd()} … (cut)`;
}

/** A one-paragraph summary: the agent's own, or the start of its conclusion. */
export function summaryOf(task: TaskRecord, max: number): string {
  if (task.summary) return shorten(task.summary, max);
  const first = (task.conclusion ?? '').split(/\n\s*\n/)[0] ?? '';
  return shorten(first.replace(/```[\s\S]*?```/g, '').replace(/\s+/g, ' '), Math.min(max, 400));
}

/** Whether a task succeeded, in one line. */
export function statusOf(task: TaskRecord): string {
  return task.state === 'succeeded' ? 'succeeded' : `${task.state}${task.error ? `: ${shorten(task.error, 200)}` : ''}`;
}

/** The one message a return adds to the main conversation: short, labelled, nothing else. */
export function returnMessage(task: TaskRecord, kind: ReturnKind, body: string, max: number, file?: string): string {
  const label = kind === 'file' ? `file ${file}` : kind;
  const head = `[Isolation Pod task ${task.id}, ${label}] `;
  return head + shorten(body, Math.max(40, max - head.length));
}
