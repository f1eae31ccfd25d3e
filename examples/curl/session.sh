#!/usr/bin/env bash
# A complete session with curl against a running Runplane (`npm start`):
# template → endpoint → jobs (async, sync, stream, cancel, retry) → health → clean up.
#
#   RUNPLANE_URL=http://127.0.0.1:8080 RUNPLANE_API_KEY=<admin key> bash examples/curl/session.sh
#
# Needs curl and node (for reading JSON). The worker is examples/worker-echo, run by the server.
set -euo pipefail
URL="${RUNPLANE_URL:-http://127.0.0.1:8080}"
KEY="${RUNPLANE_API_KEY:?set RUNPLANE_API_KEY to an admin key}"
WORKER="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/worker-echo/worker.mjs"

api() { # method path [json body]
  curl -sS --fail-with-body -X "$1" "$URL$2" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }
say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }

say "a serverless template that runs the example worker"
TEMPLATE=$(api POST /v1/templates "{\"name\": \"echo-$RANDOM$RANDOM\", \"imageName\": \"example/echo:1\", \"isServerless\": true, \"dockerStartCmd\": [\"node\", \"$WORKER\"]}")
echo "$TEMPLATE"
TEMPLATE_ID=$(echo "$TEMPLATE" | field id)

say "an endpoint on it: one warm worker, up to two"
ENDPOINT=$(api POST /v1/endpoints "{\"name\": \"echo\", \"templateId\": \"$TEMPLATE_ID\", \"workersMin\": 1, \"workersMax\": 2}")
echo "$ENDPOINT"
EP=$(echo "$ENDPOINT" | field id)

say "runsync: submit and wait for the result"
api POST "/v2/$EP/runsync" '{"input": {"echo": "hello from curl"}}'; echo

say "run: submit, then poll /status"
JOB=$(api POST "/v2/$EP/run" '{"input": {"sleep_ms": 500, "echo": 42}}' | field id)
echo "job $JOB"
api GET "/v2/$EP/status-sync/$JOB?wait=10000"; echo

say "stream: read chunks while the job runs"
JOB=$(api POST "/v2/$EP/run" '{"input": {"stream": 3, "interval_ms": 200}}' | field id)
until [ "$(api GET "/v2/$EP/status/$JOB" | field status)" != IN_QUEUE ]; do sleep 0.1; done
for _ in 1 2 3 4; do
  PAGE=$(api GET "/v2/$EP/stream/$JOB?wait=2000"); echo "$PAGE"
  [ "$(echo "$PAGE" | field status)" = COMPLETED ] && break
done

say "cancel a running job"
JOB=$(api POST "/v2/$EP/run" '{"input": {"sleep_ms": 30000}}' | field id)
sleep 1
api POST "/v2/$EP/cancel/$JOB"; echo

say "a failing job, then retry it (same id)"
JOB=$(api POST "/v2/$EP/runsync" '{"input": {"fail": "try again"}}' | field id)
api GET "/v2/$EP/status/$JOB"; echo
api POST "/v2/$EP/retry/$JOB"; echo

say "health and the request log"
api GET "/v2/$EP/health"; echo
api GET "/v2/$EP/requests?limit=3"; echo

say "clean up"
api DELETE "/v1/endpoints/$EP" && echo "endpoint $EP deleted"
