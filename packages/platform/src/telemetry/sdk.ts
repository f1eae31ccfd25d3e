import {
  REDACTED_QUERY_PARAMS,
  SDK_ENV_DEFAULTS,
  isUntracedPath,
  serviceNameFrom,
  tracingRequested,
} from './settings.js';

/** What the running SDK leaves behind for shutdownTelemetry(). */
interface TelemetryHandle {
  shutdown(): Promise<void>;
  stopping?: Promise<void>;
}

// Kept on globalThis, not in a module variable: register.js (loaded by the CLI through the package's
// `./otel-register` export) and index.js must share it even if they end up as distinct module
// instances (e.g. a test importing the sources while the CLI loaded dist).
const HANDLE = Symbol.for('runplane.telemetry.sdk');
type GlobalWithHandle = typeof globalThis & { [HANDLE]?: TelemetryHandle };

/** True when this process started the OpenTelemetry SDK (tracing exports somewhere). */
export function telemetryStarted(): boolean {
  return (globalThis as GlobalWithHandle)[HANDLE] !== undefined;
}

/**
 * Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set;
 * otherwise returns false having loaded nothing. Must run before the application is imported:
 * it registers the ESM loader hook (import-in-the-middle) that lets instrumentations patch
 * modules loaded through `import`, and the instrumentations patch `http` as it loads.
 */
export async function startTelemetry(): Promise<boolean> {
  const env = process.env; // the SDK reads its settings (and our defaults) from process.env
  if (!tracingRequested(env)) return false;
  const global = globalThis as GlobalWithHandle;
  if (global[HANDLE]) return true;

  for (const [name, value] of Object.entries(SDK_ENV_DEFAULTS)) {
    if (!env[name]?.trim()) env[name] = value;
  }

  // Everything below is loaded only when tracing is on.
  const { register } = await import('node:module');
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const [{ NodeSDK }, { HttpInstrumentation }, { PrismaInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@prisma/instrumentation'),
  ]);

  // The loader only wraps modules an instrumentation hooked (the message channel tells it which),
  // so the rest of the application loads untouched.
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const sdk = new NodeSDK({
    serviceName: serviceNameFrom(env),
    // The trace exporter comes from the standard variables: OTLP (OTEL_TRACES_EXPORTER defaults to
    // otlp) over OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, http/protobuf unless told http/json or grpc.
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => isUntracedPath(request.url),
        // GraphQL clients send their API key as ?api_key=: never into url.query.
        redactedQueryParamsServer: [...REDACTED_QUERY_PARAMS],
      }),
      // Prisma 7 reads its tracing helper from a global the instrumentation sets when enabled (no
      // module patching): spans for each operation and each SQL query, under the active span.
      new PrismaInstrumentation(),
    ],
  });
  sdk.start();
  global[HANDLE] = { shutdown: () => sdk.shutdown() };
  await waitForAllMessagesAcknowledged();
  return true;
}

export interface TelemetryShutdownLogger {
  warn(details: object, message: string): void;
}

/**
 * Flushes buffered spans and stops the SDK: the last step of a graceful stop. Does nothing when
 * tracing is off; never throws, and gives up after `timeoutMs` (an unreachable collector must not
 * turn a clean stop into a forced exit).
 */
export async function shutdownTelemetry(
  logger?: TelemetryShutdownLogger,
  timeoutMs = 5000,
): Promise<void> {
  const handle = (globalThis as GlobalWithHandle)[HANDLE];
  if (!handle) return;
  handle.stopping ??= (async () => {
    let gaveUp = false;
    // Errors are handled on the shutdown promise itself: it may settle after the timeout won.
    const flushed = Promise.resolve()
      .then(() => handle.shutdown())
      .then(
        () => true,
        (err: unknown) => {
          if (!gaveUp)
            logger?.warn(
              { err: (err as Error)?.message ?? String(err) },
              'telemetry: shutdown failed; some spans may be lost',
            );
          return true;
        },
      );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const finished = await Promise.race([flushed, timedOut]);
    clearTimeout(timer);
    if (!finished) {
      gaveUp = true;
      logger?.warn(
        { timeoutMs },
        'telemetry: spans not flushed in time (collector unreachable?); some may be lost',
      );
    }
  })();
  await handle.stopping;
}
