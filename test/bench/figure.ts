import { z } from 'zod';

/**
 * The figures file of one `pnpm bench` run: one JSON object a line, appended by the runner
 * (`run-start`, `run-end`) and by every bench (`figure`, `skipped`) to the file named by
 * {@link FIGURES_ENV}. Benches are separate processes, so this is the contract between them and
 * the renderer: parsed with these schemas on both sides.
 */
export const FIGURES_ENV = 'AALIS_BENCH_FIGURES';

/** How a figure is compared with its target. */
export const TARGET_OPS = ['<=', '<', '>='] as const;
/** One of {@link TARGET_OPS}. */
export type TargetOp = (typeof TARGET_OPS)[number];

/** What the target bounds: the ratio to the baseline, or the candidate's own value. */
export const TARGET_ON = ['ratio', 'value'] as const;

/** A figure's target from the issue: e.g. the ratio `<=` 1.6, or the value `>=` 60 calls/s. */
export const TargetSchema = z.object({ on: z.enum(TARGET_ON), op: z.enum(TARGET_OPS), limit: z.number().finite() });
/** See {@link TargetSchema}. */
export type Target = z.infer<typeof TargetSchema>;

/** The machine's load averages (1, 5, 15 minutes) when something was recorded. */
const LoadSchema = z.tuple([z.number(), z.number(), z.number()]);

/** A figure id: a stable name, `<package>.<what>` in lower case, as the root README lists them. */
export const FigureIdSchema = z.string().regex(/^[a-z0-9-]+\.[a-z0-9.-]+$/, 'a figure id is <package>.<what>, lower case, digits and dashes');

/** One measured figure: the candidate against its baseline from the same run, and its target. */
export const FigureRecordSchema = z.object({
  kind: z.literal('figure'),
  id: FigureIdSchema,
  /** What was measured, for a person: a short phrase, markdown allowed. */
  what: z.string().min(1),
  /** The bench file that measured it, relative to the repository root. */
  bench: z.string().min(1),
  candidate: z.number(),
  /** What it is compared with, measured in the same run; absent where the target is absolute and no baseline was run. */
  baseline: z.object({ what: z.string().min(1), value: z.number() }).optional(),
  unit: z.string().min(1),
  /** candidate / baseline; absent without a baseline. */
  ratio: z.number().optional(),
  target: TargetSchema.optional(),
  /** Whether the target was met; absent without a target. */
  met: z.boolean().optional(),
  rounds: z.number().int().nonnegative(),
  /** Said in the table beside the figure (sizes, what else ran). */
  note: z.string().optional(),
  quick: z.boolean(),
  load: LoadSchema,
  at: z.iso.datetime(),
});
/** See {@link FigureRecordSchema}. */
export type FigureRecord = z.infer<typeof FigureRecordSchema>;

/** A bench that could not measure its figures here (no docker engine, not root), and why. */
export const SkippedRecordSchema = z.object({
  kind: z.literal('skipped'),
  bench: z.string().min(1),
  ids: z.array(FigureIdSchema).min(1),
  reason: z.string().min(1),
  at: z.iso.datetime(),
});
/** See {@link SkippedRecordSchema}. */
export type SkippedRecord = z.infer<typeof SkippedRecordSchema>;

/** The runner's first line: the machine and the run's settings. */
export const RunStartRecordSchema = z.object({
  kind: z.literal('run-start'),
  at: z.iso.datetime(),
  quick: z.boolean(),
  commit: z.string(),
  cores: z.number().int().positive(),
  kernel: z.string(),
  uid: z.number().int(),
  load: LoadSchema,
});
/** See {@link RunStartRecordSchema}. */
export type RunStartRecord = z.infer<typeof RunStartRecordSchema>;

/** The runner's last line: how the benches ended. */
export const RunEndRecordSchema = z.object({
  kind: z.literal('run-end'),
  at: z.iso.datetime(),
  /** The exit code of `turbo run bench`: 0 when every bench finished. */
  exitCode: z.number().int(),
  load: LoadSchema,
});
/** See {@link RunEndRecordSchema}. */
export type RunEndRecord = z.infer<typeof RunEndRecordSchema>;

/** Any line of a figures file. */
export const BenchRecordSchema = z.discriminatedUnion('kind', [FigureRecordSchema, SkippedRecordSchema, RunStartRecordSchema, RunEndRecordSchema]);
/** See {@link BenchRecordSchema}. */
export type BenchRecord = z.infer<typeof BenchRecordSchema>;

/** Whether `value` meets `target` (`ratio` is used when the target is on the ratio). */
export function meets(target: Target, value: number, ratio: number | undefined): boolean {
  const x = target.on === 'ratio' ? ratio : value;
  if (x === undefined || !Number.isFinite(x)) return false;
  if (target.op === '<=') return x <= target.limit;
  if (target.op === '<') return x < target.limit;
  return x >= target.limit;
}
