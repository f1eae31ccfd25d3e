/** Minimal logger the SDK writes through; pass your own (pino, console...) with `logger`. */
export interface Logger {
  debug(message: string, jobId?: string): void;
  info(message: string, jobId?: string): void;
  warn(message: string, jobId?: string): void;
  error(message: string, jobId?: string): void;
}

const LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
type Level = (typeof LEVELS)[number];

/**
 * Logs to stderr, from `RUNPOD_LOG_LEVEL` (or `RUNPOD_DEBUG_LEVEL`, default INFO). With
 * `RUNPOD_ENDPOINT_ID` set (a deployed worker) each line is a JSON object
 * `{"requestId", "message", "level"}`, as runpod-python writes them.
 */
export function createLogger(
  env: Record<string, string | undefined>,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const wanted = (env.RUNPOD_LOG_LEVEL || env.RUNPOD_DEBUG_LEVEL || 'INFO').toUpperCase();
  const threshold = Math.max(0, LEVELS.indexOf((wanted === 'WARNING' ? 'WARN' : wanted) as Level));
  const json = Boolean(env.RUNPOD_ENDPOINT_ID);
  const log = (level: Level) => (message: string, jobId?: string) => {
    if (LEVELS.indexOf(level) < threshold) return;
    if (json) write(JSON.stringify({ requestId: jobId ?? null, message, level }) + '\n');
    else
      write(
        `${new Date().toISOString()} ${level.padEnd(5)} ${jobId ? `[${jobId}] ` : ''}${message}\n`,
      );
  };
  return { debug: log('DEBUG'), info: log('INFO'), warn: log('WARN'), error: log('ERROR') };
}

/** The same logger with a job id attached to every line. */
export function forJob(logger: Logger, jobId: string): Logger {
  return {
    debug: (m) => logger.debug(m, jobId),
    info: (m) => logger.info(m, jobId),
    warn: (m) => logger.warn(m, jobId),
    error: (m) => logger.error(m, jobId),
  };
}
