import { join } from 'node:path';
import { sandbox } from '@aalis/api-reach';
import { DurableStore, definePlugin, sessions, TempJournal } from '@aalis/core';
import { reachBindings, reachView } from '@aalis/plugin-reach';
import { modelOf } from '@aalis/model';
import { PodConfigSchema } from './config.js';
import { PodService, pod } from './service.js';

/**
 * The Isolation Pod as one plugin: provides `pod`. Code runs only in the kernel's `sandbox`
 * service, whatever backend provides it; the pod never builds a backend of its own, so it stays
 * platform-neutral. Without that service, tasks are refused. Its state lives under
 * `<dataDir>/pod/`, each task's log in the task's own directory.
 */
export const podPlugin = definePlugin({
  name: 'pod',
  provides: [pod],
  inject: [sessions, reachView],
  optional: [sandbox, reachBindings],
  config: PodConfigSchema,
  async apply(ctx, config) {
    if (ctx.dataDir === undefined) throw new Error('the pod needs the kernel to have a data directory (createKernel({ dataDir })) for its task list and export log.');
    // The same paths and protected lists the reach plugin built, so the pod reads where reach lets reads go.
    const instance = ctx.get(reachView).instance();
    const store = await DurableStore.open(join(ctx.dataDir, 'pod'));
    // Temp files a killed daemon left in task directories or export targets are removed before anything runs.
    const journal = await TempJournal.open(store.dir);
    const service = await PodService.open({
      config,
      instance,
      store,
      sessions: ctx.get(sessions),
      bindings: () => ctx.maybe(reachBindings),
      // Looked up per task: a backend provided later is used, one gone refuses the next task.
      sandbox: () => ctx.maybe(sandbox),
      model: modelOf(config.model),
      journal,
    });
    ctx.provide(pod, service);
    if (config.cleanup.policy === 'expire') {
      const timer = setInterval(() => void service.expire().catch(() => {}), config.cleanup.intervalMinutes * 60_000);
      timer.unref();
      void service.expire().catch(() => {});
      ctx.onDispose(() => clearInterval(timer));
    }
    ctx.onDispose(() => service.stop());
  },
});
