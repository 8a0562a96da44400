// A whole kernel for the pod's tests: sessions, authority, the real approval plugin, the reach
// plugin, the real Linux sandbox (bubblewrap) as the kernel's `sandbox` service, and the pod.
// Nothing but the model is a stand-in. The pod itself never imports a backend: the test provides one.
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sandbox } from '@aalis/api-reach';
import { authorityPlugin, createKernel, definePlugin, EventBus, type Kernel, type KernelEventName, type KernelEventPayload, sessions, sessionsPlugin } from '@aalis/core';
import { approvalPlugin } from '@aalis/plugin-approval';
import { reachBindings, reachPlugin } from '@aalis/plugin-reach';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import type { PodConfigInput } from './config.js';
import { podPlugin } from './plugin.js';
import { type PodService, pod } from './service.js';

/** Test data lives under /var/tmp: the sandbox has a private /tmp, so host paths there are not what it sees. */
export const TEST_PARENT = '/var/tmp';

/** A host layout: a home, a project (the workspace, a git repo), somewhere outside, and a data dir. */
export interface Place {
  readonly root: string;
  readonly home: string;
  readonly project: string;
  readonly outside: string;
  readonly install: string;
}

/** Makes a fresh {@link Place}. */
export function makePlace(): Place {
  const root = realpathSync(mkdtempSync(join(TEST_PARENT, 'aalis-pod-')));
  const home = join(root, 'home');
  const project = join(home, 'project');
  const outside = join(root, 'outside');
  const install = join(root, 'install');
  for (const d of [join(project, '.git'), join(home, '.ssh'), outside, install]) mkdirSync(d, { recursive: true });
  writeFileSync(join(project, 'notes.md'), '# notes\nThe sales figures are in sales.txt.\n');
  writeFileSync(join(project, 'sales.txt'), 'north 10\nsouth 20\n');
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  writeFileSync(join(outside, 'reference.txt'), 'outside the workspace\n');
  return { root, home, project, outside, install };
}

/** A started kernel with the pod. */
export interface PodEnv {
  readonly kernel: Kernel;
  readonly pod: PodService;
  readonly place: Place;
  readonly dataDir: string;
}

/** Starts a kernel with the pod; `config` overrides the pod's config (host and model are filled in). */
export async function startPod(place: Place, config: Partial<PodConfigInput> & { baseURL?: string }, options: { dataDir?: string; seed?: boolean; events?: EventBus; sandbox?: boolean } = {}): Promise<PodEnv> {
  const dataDir = options.dataDir ?? mkdtempSync(join(place.root, 'data-'));
  const { baseURL, ...rest } = config;
  const kernel = createKernel({ dataDir, ...(options.events ? { events: options.events } : {}) })
    .use(sessionsPlugin, { persist: true })
    .use(authorityPlugin, { owners: { chat: ['owner'] } })
    .use(approvalPlugin, { timeoutMs: 2000 })
    .use(reachPlugin, { install: place.install, form: 'source', userHome: place.home, loginShell: '/bin/sh' });
  // `sandbox: false`: a kernel with no backend at all, where the pod must refuse.
  if (options.sandbox !== false) kernel.use(definePlugin({ name: 'sandbox-linux', provides: [sandbox], apply: (ctx) => ctx.provide(sandbox, createLinuxSandbox()) }));
  kernel.use(podPlugin, {
      ...(baseURL !== undefined ? { model: { baseURL, model: 'scripted', apiKey: 'test-key', requestTimeoutMs: 10_000 } } : {}),
      ...rest,
    });
  const status = await kernel.start();
  const failed = status.filter((s) => s.state !== 'running');
  if (failed.length > 0) throw new Error(`kernel did not start: ${JSON.stringify(failed)}`);
  kernel.get(reachBindings).bind('main', { home: place.project });
  // The main conversation: two finished turns and one still waiting for its answer.
  const s = kernel.get(sessions);
  if (options.seed === false) return { kernel, pod: kernel.get(pod), place, dataDir };
  await s.append('main', { role: 'user', content: 'We are looking at the quarterly sales. Call the regions "north" and "south".' });
  await s.append('main', { role: 'assistant', content: 'Understood: north sold 10, south sold 20.' });
  return { kernel, pod: kernel.get(pod), place, dataDir };
}

/** Every path under a directory with its size and mtime: a snapshot to compare before and after. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      const st = statSync(p, { throwIfNoEntry: false });
      out[relative(dir, p)] = st ? `${entry.isDirectory() ? 'd' : 'f'}:${st.size}:${st.mtimeMs}` : 'gone';
      if (entry.isDirectory()) visit(p);
    }
  };
  visit(dir);
  return out;
}

/** An event bus that records every event emitted on it, by name. */
export class RecordingBus extends EventBus {
  readonly seen: string[] = [];
  override emit<E extends KernelEventName>(event: E, payload: KernelEventPayload<E>): void {
    this.seen.push(event);
    super.emit(event, payload);
  }
}
