export { shutdownTelemetry, telemetryStarted, type TelemetryShutdownLogger } from './sdk.js';
export { tracingRequested, isUntracedPath, UNTRACED_PATHS } from './settings.js';
export { TracingInterceptor, tracingActive, tracingInterceptors } from './tracing.interceptor.js';
