import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Answers } from './answers.js';
import { CreateAalisError } from './errors.js';
import { configOf, type DependencySource, envExampleOf, packageJsonOf, readmeOf } from './project.js';

/** The example plugin and other files copied as they are. */
export const TEMPLATE_DIR = fileURLToPath(new URL('../template', import.meta.url));

/** Refuses a target that exists and is not empty: a project is never written over files. */
export function checkTarget(target: string): void {
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new CreateAalisError('target-not-empty', `${target} is not empty, so nothing was written`, 'choose a new folder name, or empty this one first');
  }
}

/**
 * Writes the project into `target` (created; must be empty): package.json, aalis.config.json,
 * .env.example, .gitignore, README.md and plugins/notes. Everything is checked before the first
 * file is written.
 */
export function scaffold(target: string, answers: Answers, source: DependencySource): string[] {
  const dir = resolve(target);
  checkTarget(dir);
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify(packageJsonOf(answers, source), null, 2)}\n`,
    'aalis.config.json': `${JSON.stringify(configOf(answers, dir), null, 2)}\n`,
    '.env.example': envExampleOf(answers),
    '.gitignore': 'node_modules/\ndata/\n.env\n',
    'README.md': readmeOf(answers),
  };
  try {
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { flag: 'wx' });
    cpSync(join(TEMPLATE_DIR, 'plugins'), join(dir, 'plugins'), { recursive: true, errorOnExist: true, force: false });
  } catch (error) {
    throw new CreateAalisError('write-failed', `writing the project in ${dir} failed: ${(error as Error).message}`, 'check the folder is writable and has space, remove what was written, and run create-aalis again');
  }
  return [...Object.keys(files), 'plugins/notes/index.js', 'plugins/notes/package.json'];
}
