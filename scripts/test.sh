#!/usr/bin/env bash
# `npm test`: (0) lint (ESLint and Prettier's check), (1) build every package, (2) type-check and
# test every package (unit and integration suites) with turbo, (3) the end-to-end suite (packages/e2e: the real CLI as child processes), then
# a summary:
#   - a loud banner listing integration suites that were SKIPPED (NATS/PostgreSQL unreachable),
#   - failed turbo tasks,
#   - as the very last line: "<N> passed, <M> failed" (Jest test counts; M also counts test
#     suites that could not run and failed build/typecheck tasks).
# Exit status is non-zero when anything failed.
#
# Environment: RUNPLANE_REQUIRE_INTEGRATION=1 turns skips into failures (CI sets it);
# TURBO_CONCURRENCY (default 4) limits parallel turbo tasks; extra arguments go to every turbo run
# (e.g. `npm test -- --force` to ignore turbo's build cache).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export TURBO_TELEMETRY_DISABLED=1

TMP="${TMPDIR:-/tmp}"
TMP="${TMP%/}"
SKIP_DIR="$TMP/runplane-test-skips"               # @runplane/test-support records skips here
TIMINGS_FILE="$TMP/runplane-e2e-timings.txt"      # packages/e2e notes start-up times here
rm -rf "$SKIP_DIR" "$TIMINGS_FILE"

LOG_DIR="$(mktemp -d "$TMP/runplane-test-logs.XXXXXX")"
trap 'rm -rf "$LOG_DIR"' EXIT

if [ -x "$ROOT/node_modules/.bin/turbo" ]; then
  TURBO=("$ROOT/node_modules/.bin/turbo")
else
  TURBO=(npx --no turbo)
fi
TURBO_FLAGS=(--log-order=grouped --continue=dependencies-successful --summarize --concurrency="${TURBO_CONCURRENCY:-4}")

started=$SECONDS
section() { printf '\n==== %s ====\n\n' "$*"; }

# 0) Lint and formatting (ESLint, then Prettier's check): seconds, and independent of the build.
section "lint"
npm run -s lint 2>&1 | tee "$LOG_DIR/lint.log"
rc_lint=${PIPESTATUS[0]}
echo "(step took $((SECONDS - started)) s)"

# 1) Build everything first: tests run against the packages' dist, and suites that start the real
#    CLI need every app built, not only their own package's dependencies.
step_started=$SECONDS
section "build"
"${TURBO[@]}" run build "${TURBO_FLAGS[@]}" "$@" 2>&1 | tee "$LOG_DIR/build.log"
rc_build=${PIPESTATUS[0]}
echo "(step took $((SECONDS - step_started)) s)"

# 2) Type-check and test every package but the e2e suite (which runs on its own afterwards: it
#    starts real servers and must not compete for the CPU with the other suites).
step_started=$SECONDS
section "typecheck and test (all packages except @runplane/e2e)"
"${TURBO[@]}" run typecheck test --filter='!@runplane/e2e' "${TURBO_FLAGS[@]}" "$@" 2>&1 | tee "$LOG_DIR/packages.log"
rc_packages=${PIPESTATUS[0]}
echo "(step took $((SECONDS - step_started)) s)"

# 3) The e2e suite, unless the build failed (then every e2e test would fail the same way).
step_started=$SECONDS
if [ "$rc_build" -eq 0 ] && node scripts/test-summary.mjs --build-ok "$LOG_DIR/packages.log"; then
  section "end-to-end suite (@runplane/e2e)"
  "${TURBO[@]}" run typecheck test --filter=@runplane/e2e "${TURBO_FLAGS[@]}" "$@" 2>&1 | tee "$LOG_DIR/e2e.log"
  rc_e2e=${PIPESTATUS[0]}
  echo "(step took $((SECONDS - step_started)) s)"
else
  section "end-to-end suite NOT RUN: the build failed (see above)"
  rc_e2e=1
fi

# 4) The commands the README and the examples give, against a fresh standalone server.
step_started=$SECONDS
if [ "$rc_build" -eq 0 ]; then
  section "doc test (README and examples, scripts/doc-test.mjs)"
  node scripts/doc-test.mjs 2>&1 | tee "$LOG_DIR/docs.log"
  rc_docs=${PIPESTATUS[0]}
  echo "(step took $((SECONDS - step_started)) s)"
else
  rc_docs=1
fi

section "summary (npm test took $((SECONDS - started)) s)"
node scripts/test-summary.mjs --report \
  --skip-dir "$SKIP_DIR" --timings "$TIMINGS_FILE" \
  --step "lint=$rc_lint=$LOG_DIR/lint.log" \
  --step "build=$rc_build=$LOG_DIR/build.log" \
  --step "packages=$rc_packages=$LOG_DIR/packages.log" \
  --step "e2e=$rc_e2e=$LOG_DIR/e2e.log" \
  --step "docs=$rc_docs=$LOG_DIR/docs.log"
