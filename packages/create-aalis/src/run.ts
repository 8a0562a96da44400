import { readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Answers, AnswersSchema, DEPLOYMENT_CHOICES } from './answers.js';
import { CreateAalisError } from './errors.js';
import { type DependencySource, PROJECT_PACKAGES } from './project.js';
import { scaffold } from './scaffold.js';

/** What the scaffolder talks through: output, and a question when there is a person to ask. */
export interface CreateIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Asks one question; absent without a terminal (then every answer comes from flags and defaults). */
  ask?(question: string): Promise<string | undefined>;
}

export const HELP = `create-aalis: make a new Aalis daemon project

Usage: npm create aalis@latest <dir> [-- options]     (or: pnpm create aalis <dir>)

Asks for what it needs; every question has a flag, and --yes takes the defaults for the rest.
  --owner PLATFORM:ID     the owner (default cli:<your login name>)
  --deployment MODE       ${DEPLOYMENT_CHOICES.join(' | ')}: commands in this machine's sandbox, or in Docker containers (default host)
  --model-url URL         an OpenAI-compatible endpoint (default http://127.0.0.1:11434/v1)
  --model NAME            the model (default llama3.1)
  --key-env NAME          the environment variable holding the key (default OPENAI_API_KEY)
  --sandbox-root DIR      the Isolation Pod's sandbox root; never defaulted (none: no side tasks until set)
  --version VERSION       the @aalis/* version to depend on (default this create-aalis's)
  --tarballs DIR          depend on the packed .tgz files in DIR instead (for testing a build)
  -y, --yes               no questions
  -h, --help              this help
`;

const FLAGS = {
  owner: { type: 'string' },
  deployment: { type: 'string' },
  'model-url': { type: 'string' },
  model: { type: 'string' },
  'key-env': { type: 'string' },
  'sandbox-root': { type: 'string' },
  version: { type: 'string' },
  tarballs: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  help: { type: 'boolean', short: 'h' },
} as const;

function ownVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The tarballs `pnpm pack` wrote into `dir`, by package name (aalis-core-0.1.0.tgz is @aalis/core). */
function tarballsIn(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw new CreateAalisError('usage', `--tarballs ${dir} cannot be listed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, 'give the directory pnpm pack wrote the packages into');
  }
  for (const file of names) {
    const match = /^aalis-(.+)-\d+\.\d+\.\d+.*\.tgz$/.exec(file);
    if (match?.[1]) files[`@aalis/${match[1]}`] = join(resolve(dir), file);
  }
  for (const name of PROJECT_PACKAGES) if (!files[name]) throw new CreateAalisError('usage', `--tarballs ${dir} has no tarball of ${name}`, 'run pnpm pack in every package into that directory');
  return files;
}

/** Runs create-aalis with `argv` (without node and the script); returns the exit status. */
export async function run(argv: readonly string[], io: CreateIo): Promise<number> {
  try {
    let parsed: ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true }>>;
    try {
      parsed = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: true });
    } catch (error) {
      // node's own text suggests a quoting that does not balance ('-- "--bogus"'): said plainly instead
      const unknown = /^Unknown option '([^']*)'/.exec((error as Error).message)?.[1];
      const options = Object.keys(FLAGS).map((f) => `--${f}`).join(', ');
      throw new CreateAalisError('usage', unknown !== undefined ? `unknown option '${unknown}'; the options are ${options}` : (error as Error).message, "run 'create-aalis --help' for the options");
    }
    const { values: flags, positionals } = parsed;
    if (flags.help) {
      io.stdout(HELP);
      return 0;
    }
    if (positionals.length > 1) throw new CreateAalisError('usage', `one project folder, got ${positionals.length}: ${positionals.join(' ')}`, 'quote a folder name with spaces');
    const ask = flags.yes ? undefined : io.ask;
    const question = async (text: string, fallback: string | undefined): Promise<string | undefined> => {
      if (!ask) return fallback;
      const answer = (await ask(`${text}${fallback !== undefined ? ` (${fallback})` : ''}: `))?.trim();
      return answer ? answer : fallback;
    };
    const target = positionals[0] ?? (await question('Project folder', undefined));
    if (!target) throw new CreateAalisError('usage', 'no project folder was given', 'name one: npm create aalis@latest my-bot');
    const owner = flags.owner ?? (await question('Owner (platform:id)', `cli:${userInfo().username}`))!;
    const colon = owner.indexOf(':');
    // Never defaulted: the pod writes there, and a guess (the project, the home) would be wrong.
    const sandboxRoot = flags['sandbox-root'] ?? (await question('Isolation Pod sandbox root (absolute, outside the project; empty for none)', undefined));
    const raw = {
      name: basename(resolve(target)),
      owner: colon > 0 ? { platform: owner.slice(0, colon), userId: owner.slice(colon + 1) } : { platform: '', userId: owner },
      deployment: flags.deployment ?? (await question(`Deployment (${DEPLOYMENT_CHOICES.join(' / ')})`, 'host')),
      model: {
        baseURL: flags['model-url'] ?? (await question('Model endpoint (OpenAI-compatible base URL)', 'http://127.0.0.1:11434/v1')),
        model: flags.model ?? (await question('Model', 'llama3.1')),
        apiKeyEnv: flags['key-env'] ?? (await question('Environment variable with the key', 'OPENAI_API_KEY')),
      },
      ...(sandboxRoot ? { sandboxRoot } : {}),
    };
    const checked = AnswersSchema.safeParse(raw);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new CreateAalisError('invalid-answer', `${issue.path.join('.') || 'answer'}: ${issue.message}`, 'give it as the help shows (create-aalis --help)');
    }
    const answers: Answers = checked.data;
    const source: DependencySource = flags.tarballs !== undefined ? { kind: 'tarballs', files: tarballsIn(flags.tarballs) } : { kind: 'version', version: flags.version ?? ownVersion() };
    const written = scaffold(target, answers, source);
    io.stdout(`Made ${resolve(target)}: ${written.join(', ')}\n\nNext:\n  cd ${target}\n  npm install\n  npm start\n`);
    return 0;
  } catch (error) {
    if (error instanceof CreateAalisError) {
      io.stderr(`create-aalis: ${error.message}${error.fix ? `\n  fix: ${error.fix}` : ''}\n`);
      return error.code === 'usage' ? 2 : 1;
    }
    io.stderr(`create-aalis: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
