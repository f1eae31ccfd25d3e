#!/usr/bin/env -S node --max-semi-space-size=64
// --max-semi-space-size=64 (MiB; every way Runplane is started passes it): V8's young generation,
// where each request's short-lived objects die, 4× its default. A busy server collects garbage
// less often: /run intake +9 %, job throughput +7 % in standalone (docs/performance.md).
// Tracing must be registered before anything imports http, so it loads first (no-op unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set); then the CLI proper.
await import('@runplane/platform/otel-register');
await import('../dist/main.js');
