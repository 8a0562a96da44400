import { type AnyTool, defineTool } from '@aalis/core';
import { effectiveRiskLevel } from '@aalis/sandbox-docker';
import type { LoadedSpec } from './load-specs.js';
import { admitSpecTool, runSpecTool, type SpecRunDeps } from './run-spec-tool.js';

/**
 * A loaded spec as a dispatcher tool: its JSON Schema as the parameter schema, its effective
 * risk (a generated tool, or one in the builder profile, is high whatever it declares), an
 * admission that refuses a call for someone who is not an owner before anyone is asked, and a
 * handler that runs it through the envelope in its profile.
 */
export function specToolOf(loaded: LoadedSpec, deps: SpecRunDeps): AnyTool {
  const { spec } = loaded;
  return defineTool({
    name: spec.name,
    description: spec.description,
    params: loaded.params,
    risk: effectiveRiskLevel({ declared: spec.risk, profile: spec.sandbox.profile, generated: spec.generated }),
    // before the high-risk gate: a stranger's call is refused without asking anybody
    admit: (ctx) => admitSpecTool(ctx, loaded),
    summarize: (params: unknown) => `${spec.name} ${JSON.stringify(params)} (spec tool, profile ${spec.sandbox.profile})`,
    handler: (ctx, params) => runSpecTool(ctx, loaded, params, deps),
  });
}
