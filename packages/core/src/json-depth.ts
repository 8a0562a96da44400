/**
 * The deepest nesting of arrays and objects taken from JSON that crosses a boundary (a request
 * body, a model's tool-call arguments). JSON.parse takes any depth, but what reads the value after
 * it recurses (the schemas of recursive shapes, `JSON.stringify` of an event): a turn's `startedBy`
 * chain 3,000 deep, or params nested 500,000 deep, ended in "Maximum call stack size exceeded",
 * answered 500 instead of 400 (found by an attack).
 */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests arrays and objects deeper than `limit` (an explicit stack: any depth is measured without recursion). */
export function jsonNestsDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
