/** What the bus needs to report problems; pino loggers and Nest's Logger both fit. */
export interface BusLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: BusLogger = { warn: () => {}, error: () => {} };
