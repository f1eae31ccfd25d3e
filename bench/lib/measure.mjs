// Measurement drivers shared by every benchmarked system. A system is measured through one
// function, submitAndWait(input) → { submitted, startedAt, observed } (epoch ms, comparable across
// the processes of this machine): submit one job, wait until its result is observed, and report
// when the handler started (the handler returns its own clock reading).

/** Milliseconds since the epoch with sub-millisecond precision, comparable across processes. */
// The system-wide monotonic clock (CLOCK_MONOTONIC), in ms: the workers stamp their handler's
// start with it too. performance.timeOrigin is fixed per process at its start and can be off by
// more than a dispatch takes (it gave BullMQ a negative p50).
export const now = () => Number(process.hrtime.bigint()) / 1e6;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Exits 2 naming the option when one of `names` is not a positive whole number. */
export function requirePositiveIntegers(opts, names) {
  for (const name of names)
    if (!(Number.isInteger(Number(opts[name])) && Number(opts[name]) > 0)) {
      console.error(`--${name} ${opts[name]}: a positive whole number`);
      process.exit(2);
    }
}

export const round = (x) =>
  x === undefined || x === null || Number.isNaN(x) ? undefined : Math.round(x * 100) / 100;

/**
 * A job input of about `kb` KiB shaped like a chat-completion request (the payload of a typical
 * LLM worker): a model, sampling settings and a conversation of 1 KiB messages. `--input-kb`.
 */
export function chatInput(kb) {
  const messages = Array.from({ length: Math.max(1, Math.round(kb)) }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `${i} ${'lorem ipsum '.repeat(84)}`.slice(0, 1000),
  }));
  return { model: 'bench-model', temperature: 0.7, max_tokens: 256, stream: false, messages };
}

/** Every job of `submitAndWait` also carries the fields of `extra` in its input. */
export const withInput = (submitAndWait, extra = {}) =>
  Object.keys(extra).length ? (input) => submitAndWait({ ...input, ...extra }) : submitAndWait;

/**
 * Dispatch latency with idle waiting workers: one job at a time, a short pause between jobs so the
 * workers are back to waiting. dispatch = submit → handler start, roundTrip = submit → result observed.
 */
export async function latency(submitAndWait, { jobs, warmup = 50, pauseMs = 2 }) {
  for (let i = 0; i < warmup; i++) await submitAndWait({ warmup: i }); // JIT, connections, caches
  const dispatch = [];
  const roundTrip = [];
  for (let i = 0; i < jobs; i++) {
    const r = await submitAndWait({ i });
    dispatch.push(r.startedAt - r.submitted);
    roundTrip.push(r.observed - r.submitted);
    await sleep(pauseMs);
  }
  return { dispatch: summary(dispatch), roundTrip: summary(roundTrip) };
}

/**
 * End-to-end throughput: `jobs` no-op jobs, one submit per job, `clients` callers at once, each
 * submitting its next job when the previous one's result is observed. jobs/s from the first
 * submit to the last result observed; also the rate over the 2nd and the 9th tenth of the jobs
 * (away from ramp-up and drain), which differ when a job's cost grows with the jobs already stored.
 */
export async function throughput(submitAndWait, { jobs, clients }) {
  let next = 0;
  const roundTrip = [];
  const done = [];
  const started = now();
  const caller = async () => {
    while (next < jobs) {
      next += 1;
      const r = await submitAndWait({});
      roundTrip.push(r.observed - r.submitted);
      done.push(r.observed);
    }
  };
  await Promise.all(Array.from({ length: clients }, caller));
  const seconds = (now() - started) / 1000;
  const rate = (from, to) => {
    const [a, b] = [
      Math.floor((from * jobs) / 10),
      Math.min(jobs - 1, Math.floor((to * jobs) / 10)),
    ];
    return b > a ? round((b - a) / ((done[b] - done[a]) / 1000)) : undefined;
  };
  return {
    jobs,
    clients,
    seconds: round(seconds),
    jobsPerSecond: round(jobs / seconds),
    earlyJobsPerSecond: rate(1, 2),
    lateJobsPerSecond: rate(8, 9),
    roundTrip: summary(roundTrip),
  };
}

export function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return {
    n: sorted.length,
    p50: round(at(50)),
    p90: round(at(90)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1]),
  };
}
