import { isAbsolute, relative } from 'node:path';
import { parseConfig } from '@aalis/cli';
import { PodConfigSchema } from '@aalis/plugin-pod';
import type { Answers } from './answers.js';
import { CreateAalisError } from './errors.js';

/** The zod the example plugin imports: the version every `@aalis/*` package is built against. */
export const ZOD_VERSION = '4.6.7';

/** Where the generated project takes each `@aalis/*` package from: the registry at a version, or a local tarball. */
export type DependencySource = { readonly kind: 'version'; readonly version: string } | { readonly kind: 'tarballs'; readonly files: Readonly<Record<string, string>> };

/** The `@aalis/*` packages a project depends on directly: the daemon, and what the example plugin imports. */
export const PROJECT_PACKAGES = ['@aalis/cli', '@aalis/core', '@aalis/plugin-reach', '@aalis/plugin-tools', '@aalis/plugin-pod'] as const;

/** The project's package.json. */
export function packageJsonOf(answers: Answers, source: DependencySource): Record<string, unknown> {
  const dependencies: Record<string, string> = {};
  for (const name of PROJECT_PACKAGES) {
    if (source.kind === 'version') dependencies[name] = source.version;
    else {
      const file = source.files[name];
      if (file === undefined) throw new CreateAalisError('usage', `no tarball for ${name} in the tarball directory`, `pack it (pnpm pack) into the directory given to --tarballs`);
      dependencies[name] = `file:${file}`;
    }
  }
  dependencies.zod = ZOD_VERSION;
  // Packages the @aalis packages depend on among themselves come from the same tarballs.
  const overrides = source.kind === 'tarballs' ? Object.fromEntries(Object.entries(source.files).map(([name, file]) => [name, `file:${file}`])) : undefined;
  return {
    name: answers.name,
    private: true,
    type: 'module',
    description: 'An Aalis daemon: the agent runs its tools under the reach of its owner.',
    scripts: { start: 'aalis serve', doctor: 'aalis doctor' },
    dependencies,
    ...(overrides ? { overrides } : {}),
    engines: { node: '>=20.19' },
  };
}

/**
 * The project's aalis.config.json, checked by the daemon's own schema (and the pod section by the
 * pod's) before anything is written: a project that would not start is never made.
 */
export function configOf(answers: Answers, projectDir: string): Record<string, unknown> {
  if (answers.sandboxRoot !== undefined) {
    const inside = relative(projectDir, answers.sandboxRoot);
    if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) {
      throw new CreateAalisError('invalid-answer', `the sandbox root ${answers.sandboxRoot} is the project or inside it`, 'choose a folder of its own outside the project, e.g. ~/aalis-sandbox: the pod writes there and nowhere else');
    }
  }
  const model = { baseURL: answers.model.baseURL, model: answers.model.model, apiKeyEnv: answers.model.apiKeyEnv };
  // The one endpoint serves the main agent and the reviewer (`model`) and the pod's agent.
  const config = {
    owners: { [answers.owner.platform]: [answers.owner.userId] },
    deployment: answers.deployment,
    plugins: { './plugins/notes': { dir: 'notes' } },
    model,
    pod: {
      ...(answers.sandboxRoot !== undefined ? { sandboxRoot: answers.sandboxRoot } : {}),
      model: { ...model },
    },
  };
  try {
    parseConfig('aalis.config.json', config);
  } catch (error) {
    throw new CreateAalisError('invalid-config', `the config would not be accepted by the daemon: ${(error as Error).message}`, 'this is a bug in create-aalis for this version of @aalis/cli; report it with the flags you gave');
  }
  const pod = PodConfigSchema.safeParse(config.pod);
  if (!pod.success) {
    const issue = pod.error.issues[0];
    throw new CreateAalisError('invalid-answer', `the pod would refuse its config: ${issue?.path.join('.')}: ${issue?.message}`, 'give the model endpoint as a URL (http://host:port/v1) and an absolute sandbox root');
  }
  return config;
}

/** `.env.example`: the key's variable, never its value. */
export function envExampleOf(answers: Answers): string {
  return `# Copy to .env (never committed; no sandboxed command can read it) and fill in, then load it\n# into the shell before npm start, e.g. set -a; . ./.env; set +a\n${answers.model.apiKeyEnv}=\n`;
}

/** The project's README: the two commands, and where everything is. */
export function readmeOf(answers: Answers): string {
  const docker = answers.deployment === 'docker'
    ? '\nThis project runs commands in hardened Docker containers: the machine needs a Docker Engine, and\nthe sandbox image named by `AALIS_DOCKER_IMAGE` (or `"docker": { "image": … }` in aalis.config.json): any\nlocal image with a POSIX shell; `bash node_modules/@aalis/sandbox-docker/scripts/prepare.sh`, as root on\na Debian-like machine, starts the engine and builds one without a registry, and prints its tag.\n'
    : '';
  const root = answers.sandboxRoot === undefined
    ? 'The Isolation Pod has no sandbox root yet, so it runs no side tasks: set `pod.sandboxRoot` in\naalis.config.json to a folder of its own (never this project) when you want them.'
    : `The Isolation Pod writes only under ${answers.sandboxRoot}.`;
  return `# ${answers.name}

An Aalis daemon: an AI agent whose tool calls run under the reach of its owner
(${answers.owner.platform}:${answers.owner.userId}).

\`\`\`sh
npm install
npm start
\`\`\`

\`npm start\` runs \`aalis serve\`: it prints the web console's address
(\`console: http://127.0.0.1:8787/console#code=…\`); open it to chat with the agent, answer approvals
and see the audit log (or chat from a terminal: \`npx aalis chat\`). The address opens the console
once, within 30 minutes (it holds a one-time code, never the daemon's token); \`npx aalis console\`
prints a new one.
Before it, put the model key in the environment: copy \`.env.example\` to \`.env\`, fill in
\`${answers.model.apiKeyEnv}\`, and load it (\`set -a; . ./.env; set +a\`).
${docker}
- \`aalis.config.json\`: owners, deployment, plugins and the model of the agent, the reviewer and the pod
  (${answers.model.model} at ${answers.model.baseURL}; \`model\` and \`pod.model\`).
  \`npx aalis serve --help\` lists every setting and the plugins it would load.
- \`plugins/notes\`: an example plugin (tools \`save_note\`, \`read_note\`), loaded by the \`plugins\` entry of the config.
  Write your own beside it and add it there; a plugin that fails is left out and named at start.
- \`data/\`: the daemon's data (conversations, approvals, audit log). The agent's commands can never write
  it, \`node_modules\`, \`package.json\` or \`plugins/\`.

${root}

\`npm run doctor\` says what works on this machine and how to fix what does not.
`;
}
