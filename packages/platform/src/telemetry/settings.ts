// Plain settings of the tracing setup. No OpenTelemetry SDK code is imported here: this module is
// loaded on every start, and tracing must cost nothing when it is off.

/** Incoming requests that never get a span (probes hit them every few seconds). */
export const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Service name reported when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
export const DEFAULT_SERVICE_NAME = 'runplane';

/** Query parameters whose values never reach a span: the instrumentation's own list plus `api_key`. */
export const REDACTED_QUERY_PARAMS: readonly string[] = [
  'api_key',
  'sig',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
];

/**
 * SDK settings we default (unless the operator set them) so that turning tracing on sends traces
 * and nothing else: NodeSDK would otherwise also export metrics and logs over OTLP, and its
 * default resource detectors include ones that probe cloud metadata endpoints (slow offline).
 */
export const SDK_ENV_DEFAULTS: Readonly<Record<string, string>> = {
  OTEL_METRICS_EXPORTER: 'none',
  OTEL_LOGS_EXPORTER: 'none',
  OTEL_NODE_RESOURCE_DETECTORS: 'env,host,os,process',
};

/** Tracing is on when an OTLP endpoint is configured and the SDK is not explicitly disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return false;
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/** The service.name to pass to the SDK, or undefined when OTEL_RESOURCE_ATTRIBUTES already sets one. */
export function serviceNameFrom(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.OTEL_SERVICE_NAME?.trim();
  if (explicit) return explicit;
  const attributes = env.OTEL_RESOURCE_ATTRIBUTES ?? '';
  if (attributes.split(',').some((pair) => pair.split('=')[0]?.trim() === 'service.name'))
    return undefined;
  return DEFAULT_SERVICE_NAME;
}

/** True for an incoming request path (query string allowed) that must not be traced. */
export function isUntracedPath(url: string | undefined): boolean {
  if (!url) return false;
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return UNTRACED_PATHS.has(path);
}
