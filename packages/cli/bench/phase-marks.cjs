// Preloaded (`node -r`) by bench/startup.ts into one `aalis exec` per round: at the process's exit it
// appends the run's phase marks (src/exec-phases.ts, `aalis:*`), node's own bootstrap end and the
// exit itself, each in ms since the process started, as one JSON line to $AALIS_BENCH_PHASES.
'use strict';
const { appendFileSync } = require('node:fs');

process.on('exit', () => {
  const marks = { bootstrap: performance.nodeTiming.bootstrapComplete };
  for (const m of performance.getEntriesByType('mark')) if (m.name.startsWith('aalis:')) marks[m.name.slice(6)] = m.startTime;
  marks.exit = performance.now();
  appendFileSync(process.env.AALIS_BENCH_PHASES, `${JSON.stringify(marks)}\n`);
});
