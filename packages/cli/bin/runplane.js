#!/usr/bin/env node
// Tracing must be registered before anything imports http, so it loads first (no-op unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set); then the CLI proper.
await import('@runplane/platform/otel-register');
await import('../dist/main.js');
