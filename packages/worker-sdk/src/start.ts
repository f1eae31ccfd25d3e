import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createLogger, forJob, type Logger } from './logger.js';
import { isPlainObject, runJob } from './run-job.js';
import type { Job, JobDoneBody, StartOptions } from './types.js';
import { createWorker } from './worker.js';

/**
 * Runs a worker the way `runpod.serverless.start()` does:
 * - local test mode when `--test_input '<json>'` is given or `RUNPOD_WEBHOOK_GET_JOB` is unset:
 *   runs one job from that argument or `./test_input.json`, prints the result, exits 0 (1 on error);
 * - otherwise polls for jobs until SIGTERM/SIGINT, then takes no more, finishes the jobs in
 *   progress and exits 0 (a second signal exits at once with 1).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler inputs are the worker's own JSON; `any` keeps `job.input.x` free of casts
export async function start<TInput = Record<string, any>>(
  options: StartOptions<TInput>,
): Promise<number> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? createLogger(env);
  const finish = (code: number) => {
    if (options.exit !== false) process.exit(code);
    return code;
  };
  const argv = options.argv ?? process.argv.slice(2);
  const testInput = argValue(argv, '--test_input');
  if (testInput !== undefined || !env.RUNPOD_WEBHOOK_GET_JOB) {
    return finish(await runLocal(options as StartOptions, testInput, logger));
  }

  const worker = createWorker({ ...options, env, logger });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1 && options.exit !== false) {
      logger.warn(`${signal} again: exiting without waiting for the jobs in progress`);
      process.exit(1);
    }
    logger.info(`${signal} received`);
    worker.stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await worker.run();
    return finish(0);
  } catch (err) {
    logger.error(`worker failed: ${err instanceof Error ? err.message : String(err)}`);
    return finish(1);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** runpod-python's rp_local: one job, the result printed as one JSON line on stdout. */
async function runLocal(
  options: StartOptions,
  testInput: string | undefined,
  logger: Logger,
): Promise<number> {
  let raw = testInput;
  if (raw === undefined) {
    const file = path.join(options.cwd ?? process.cwd(), 'test_input.json');
    if (!existsSync(file)) {
      logger.warn(
        'RUNPOD_WEBHOOK_GET_JOB is not set and there is no --test_input nor test_input.json: nothing to do',
      );
      return 1;
    }
    logger.info(`local test mode: using ${file}`);
    raw = readFileSync(file, 'utf8');
  } else {
    logger.info('local test mode: using --test_input');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    logger.error(`the test input is not valid JSON: ${(err as Error).message}`);
    return 1;
  }
  if (!isPlainObject(parsed) || parsed.input === undefined || parsed.input === null) {
    logger.error('the test job has no "input": unable to run');
    return 1;
  }
  const job = { ...parsed, id: typeof parsed.id === 'string' ? parsed.id : 'local_test' } as Job;
  const log = forJob(logger, job.id);
  const outcome = await runJob(
    options.handler,
    job,
    {
      workerId: 'local',
      signal: new AbortController().signal,
      log,
      progress: async (value) => log.info(`progress: ${JSON.stringify(value)}`),
    },
    {
      // Locally a streaming handler's output is always the list of its items (as rp_local does).
      returnAggregateStream: true,
      emit: async (chunk) => log.debug(`stream: ${JSON.stringify(chunk.output)}`),
      host: { hostname: (options.env ?? process.env).RUNPOD_POD_HOSTNAME, workerId: 'local' },
    },
  );
  const result: JobDoneBody = outcome!.body;
  if (result.error) {
    log.error(`job failed: ${result.error}`);
    return 1;
  }
  process.stdout.write(JSON.stringify(result) + '\n');
  log.info('job completed; local test done');
  return 0;
}

/** `--name value` or `--name=value`. */
function argValue(argv: string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === name) return argv[i + 1] ?? '';
    if (argv[i].startsWith(`${name}=`)) return argv[i].slice(name.length + 1);
  }
  return undefined;
}
