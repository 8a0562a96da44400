import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { locatePlugin, pluginDirOf } from './daemon/plugins.js';

/**
 * What of a deployment directory is the daemon's control plane for a command run there (`aalis
 * exec`, `explain`, `policy`), as the daemon's own reach has it: the config file, the tools
 * directory (`tools.dir`, default `tools/`), `plugins/`, the whole directories of the plugins the
 * config names by path (their `package.json` chooses what runs), and an npm install's `plugins/`. Before, those commands gave reach none of them:
 * a sandboxed command run in a project rewrote `aalis.config.json` (an owner added) and planted a
 * spec tool, and `explain` called those writes allowed, where the daemon refused them (found by a
 * new user's trial). Read without the config's schema (which would load the agent's and the model's
 * packages into every `aalis exec`), and without running anything: a config that does not parse
 * still has its file and the default directories protected.
 */
export function deploymentControlOf(deploymentDir: string, install: { readonly dir: string; readonly form: 'source' | 'npm' }): { configFile: string; codeDirs: string[] } {
  const configFile = join(deploymentDir, 'aalis.config.json');
  const dirs = [join(deploymentDir, 'plugins'), join(deploymentDir, 'tools')];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configFile, 'utf8'));
  } catch {
    raw = undefined; // missing or broken: the defaults above
  }
  if (typeof raw === 'object' && raw !== null) {
    const { tools, plugins } = raw as { tools?: unknown; plugins?: unknown };
    const dir = typeof tools === 'object' && tools !== null ? (tools as { dir?: unknown }).dir : undefined;
    if (typeof dir === 'string' && dir !== '') dirs.push(resolve(deploymentDir, dir));
    if (typeof plugins === 'object' && plugins !== null) {
      for (const specifier of Object.keys(plugins)) {
        const dir = pluginDirOf(specifier, deploymentDir);
        if (dir !== undefined) dirs.push(dir);
        // and where the entry is, should the path lead out of that directory (a symlink)
        const from = locatePlugin(specifier, deploymentDir);
        if (from !== undefined && !from.includes('/node_modules/')) dirs.push(dirname(from));
      }
    }
  }
  if (install.form === 'npm' && existsSync(join(install.dir, 'plugins'))) dirs.push(join(install.dir, 'plugins'));
  return { configFile, codeDirs: [...new Set(dirs)] };
}
