import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
  type ValidationError,
} from 'class-validator';

const toBool = ({ value }: { value: unknown }) =>
  value === undefined || value === ''
    ? undefined
    : ['1', 'true', 'yes', 'on'].includes(String(value).toLowerCase());
const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : Number(value);

/**
 * Every setting Runplane reads from the environment, validated at start (docs/configuration.md).
 * Cluster mode is chosen by configuration: `NATS_URL` selects the NATS bus, and a service with a
 * database URL (`DATABASE_URL_<SERVICE>` or `DATABASE_URL`) uses real PostgreSQL.
 */
export class RunplaneConfig {
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'PORT must be an integer' })
  @Min(0)
  @Max(65535)
  PORT?: number;

  /** Loopback by default: exposing a server is a decision (HOST=0.0.0.0 behind TLS, README). */
  @IsString() HOST = '127.0.0.1';

  /**
   * Proxies (comma-separated addresses / CIDR ranges) whose X-Forwarded-For is believed when
   * deciding the client address that authentication failures are counted against. Unset: the
   * socket's peer address.
   */
  @IsOptional()
  @IsString()
  @Matches(/^[0-9A-Fa-f:.,/\s]*$/, {
    message: 'RUNPLANE_TRUST_PROXY must be comma-separated addresses or CIDR ranges',
  })
  RUNPLANE_TRUST_PROXY?: string;

  /**
   * Unknown API keys one client address may present per RUNPLANE_AUTH_FAILURE_WINDOW_S on one
   * instance before every key it presents gets 429 for the rest of the window; 0 turns it off.
   */
  @Transform(toInt) @IsInt() @Min(0) RUNPLANE_AUTH_FAILURE_LIMIT = 100;
  @Transform(toInt) @IsInt() @Min(1) RUNPLANE_AUTH_FAILURE_WINDOW_S = 60;

  /** Time a client has to send a request's headers. */
  @Transform(toInt) @IsInt() @Min(100) RUNPLANE_HEADERS_TIMEOUT_MS = 30_000;

  /**
   * Time a client has to send a whole request, headers and body (not the answer: long polls may
   * take minutes to be answered). Slow or stalled uploads are cut off with 408.
   */
  @Transform(toInt) @IsInt() @Min(100) RUNPLANE_REQUEST_TIMEOUT_MS = 120_000;

  /** How long an idle keep-alive connection stays open between requests. */
  @Transform(toInt) @IsInt() @Min(100) RUNPLANE_KEEP_ALIVE_TIMEOUT_MS = 72_000;

  /**
   * Bytes of request bodies being received at once, across all requests of the process; a body
   * that would go over it gets 503 with Retry-After instead of being buffered; 0 turns it off.
   */
  @Transform(toInt) @IsInt() @Min(0) RUNPLANE_MAX_INFLIGHT_BODY_BYTES = 128 * 1024 * 1024;

  /** Embedded database and other local state of the standalone server. */
  @IsString() @MinLength(1) RUNPLANE_DATA_DIR = './.runplane';

  /** Bootstrap admin key: exists at start when set (stored hashed). Never logged. */
  @IsOptional()
  @IsString()
  @MinLength(8, {
    message: 'RUNPLANE_API_KEY must be at least 8 characters (use 32+ random characters)',
  })
  RUNPLANE_API_KEY?: string;

  @IsOptional() @IsString() NATS_URL?: string;

  /** Isolates several installations (or test runs) sharing one NATS server. */
  @IsString() RUNPLANE_BUS_NAMESPACE = 'runplane';

  @IsOptional() @IsString() DATABASE_URL?: string;

  /** Apply each service's migrations when it starts (safe with replicas: they take a lock). */
  @Transform(toBool) @IsBoolean() RUNPLANE_MIGRATE_ON_START = true;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL = 'info';

  /**
   * Serve the console (web UI) at `/`: on by default in standalone mode, off for a service started
   * alone (in a cluster, the service the ingress routes `/` to turns it on).
   */
  @IsOptional() @Transform(toBool) @IsBoolean() RUNPLANE_CONSOLE?: boolean;

  /** Log every HTTP request (off by default: at thousands of requests per second it costs CPU). */
  @Transform(toBool) @IsBoolean() RUNPLANE_LOG_REQUESTS = false;

  /**
   * Requests per 10 s each API key (counted by key id, once verified) may make to the management
   * APIs (`/v1/...`, `/graphql`) on one instance; 0 turns the limit off (docs/limits.md).
   */
  @Transform(toInt) @IsInt() @Min(0) RUNPLANE_MANAGEMENT_RATE_LIMIT = 1000;

  /** How long a graceful shutdown may take before the process exits anyway. */
  @Transform(toInt) @IsInt() @Min(1000) RUNPLANE_SHUTDOWN_TIMEOUT_MS = 25_000;

  @IsOptional() @IsString() OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /**
   * Who may read `/metrics`: comma-separated addresses / CIDR ranges matched against the socket's
   * peer address (docs/observability.md). Loopback only by default.
   */
  @IsString()
  @Matches(/^[0-9A-Fa-f:.,/\s]*$/, {
    message: 'RUNPLANE_METRICS_ALLOW must be comma-separated addresses or CIDR ranges',
  })
  RUNPLANE_METRICS_ALLOW = '127.0.0.0/8,::1/128';

  /**
   * JetStream copies of Runplane's event stream and payload bucket (cluster mode): 3 on a
   * three-server JetStream cluster so an event survives the loss of a server.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(5) RUNPLANE_NATS_REPLICAS = 1;

  /**
   * Base URL at which workers reach the queue API (`<url>/v2/...` in their RUNPOD_WEBHOOK_*
   * variables). Unset: the scheduler uses this process's own listening address, which is right in
   * standalone mode; cluster mode needs the ingress (or queue-api service) URL here.
   */
  @IsOptional()
  @IsUrl(
    { require_tld: false, require_protocol: true, protocols: ['http', 'https'] },
    { message: 'RUNPLANE_PUBLIC_URL must be an http(s) URL' },
  )
  RUNPLANE_PUBLIC_URL?: string;
}

/** Variables whose values must never appear in messages. */
const SECRET_KEYS = new Set(['RUNPLANE_API_KEY', 'DATABASE_URL', 'NATS_URL']);

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Reads and validates the environment; throws ConfigError listing every problem at once. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
): RunplaneConfig & { raw: NodeJS.ProcessEnv } {
  const known = Object.fromEntries(
    Object.keys(new RunplaneConfig())
      .concat([
        'PORT',
        'RUNPLANE_API_KEY',
        'NATS_URL',
        'DATABASE_URL',
        'OTEL_EXPORTER_OTLP_ENDPOINT',
        'RUNPLANE_PUBLIC_URL',
        'RUNPLANE_TRUST_PROXY',
        'RUNPLANE_CONSOLE',
      ])
      .filter((k) => env[k] !== undefined && env[k] !== '')
      .map((k) => [k, env[k]]),
  );
  const config = plainToInstance(RunplaneConfig, known, { exposeDefaultValues: true });
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length) {
    const lines = errors.map((e) => describe(e, env));
    throw new ConfigError(
      `invalid configuration:\n${lines.map((l) => `  - ${l}`).join('\n')}\nSee docs/configuration.md.`,
    );
  }
  return Object.assign(config, { raw: env });
}

function describe(error: ValidationError, env: NodeJS.ProcessEnv): string {
  const messages = Object.values(error.constraints ?? {}).join('; ');
  const value = SECRET_KEYS.has(error.property) ? '(hidden)' : JSON.stringify(env[error.property]);
  return `${error.property}: ${messages} (got ${value})`;
}
