// Loaded first by the CLI (`await import('@runplane/platform/otel-register')` in bin/runplane.js),
// before the application, so that `http` and friends are instrumented as they load.
// Without OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) it does nothing:
// no SDK is loaded and no loader hook is registered.
import { tracingRequested } from './settings.js';

if (tracingRequested(process.env)) {
  const { startTelemetry } = await import('./sdk.js');
  await startTelemetry();
}

export {};
