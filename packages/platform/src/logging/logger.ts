import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths pino blanks out wherever they appear: keys, secret values, credentials in URLs. */
const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  '*.apiKey',
  '*.key',
  '*.value',
  '*.password',
  '*.secret',
  '*.accessSecret',
];

/** One JSON logger per process; services log through children carrying `service`. */
export function createLogger(options: {
  level: string;
  name?: string;
  destination?: pino.DestinationStream;
}): Logger {
  return pino(
    {
      name: options.name ?? 'runplane',
      level: options.level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: {
        req: (req: { method?: string; url?: string; id?: string }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
        }),
        err: pino.stdSerializers.err,
      },
    },
    options.destination,
  );
}

/** Removes `api_key` query values (GraphQL sends keys that way) from a URL before it is logged. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(/([?&]api_key=)[^&]*/gi, '$1[redacted]');
}

/** Nest's logger interface over pino, so framework messages are JSON lines too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.write('info', message, context);
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error(
      { context, trace },
      typeof message === 'string' ? message : JSON.stringify(message),
    );
  }
  warn(message: unknown, context?: string) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string) {
    this.write('fatal', message, context);
  }

  private write(
    level: 'info' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    context?: string,
  ) {
    if (typeof message === 'string') this.logger[level]({ context }, message);
    else this.logger[level]({ context, ...(message as object) });
  }
}
