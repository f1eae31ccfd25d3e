#!/usr/bin/env node
// The official RunPod JS client (npm `runpod-sdk`), unchanged, against Runplane: only `baseUrl`
// differs from a RunPod setup.
//
//   RUNPLANE_URL=http://127.0.0.1:8080 RUNPLANE_API_KEY=<key> ENDPOINT_ID=<id> node examples/client-runpod-sdk/index.mjs
//
// ENDPOINT_ID: an endpoint running examples/worker-echo (examples/curl/session.sh shows how to make one).
import runpodSdk from 'runpod-sdk';

const { RUNPLANE_URL = 'http://127.0.0.1:8080', RUNPLANE_API_KEY, ENDPOINT_ID } = process.env;
if (!RUNPLANE_API_KEY || !ENDPOINT_ID) throw new Error('set RUNPLANE_API_KEY and ENDPOINT_ID');

const runpod = runpodSdk(RUNPLANE_API_KEY, { baseUrl: `${RUNPLANE_URL}/v2` });
const endpoint = runpod.endpoint(ENDPOINT_ID);

// Synchronous: waits for the result.
const result = await endpoint.runSync({ input: { echo: 'hello from runpod-sdk' } });
console.log('runSync  →', result.status, result.output);

// Asynchronous: an id now, the status later.
const { id } = await endpoint.run({ input: { sleep_ms: 300, echo: { n: 1 } } });
console.log('run      →', id);
console.log('status   →', await endpoint.statusSync(id, 10_000));

// Streaming: chunks as the worker produces them.
const streamed = await endpoint.run({ input: { stream: 3, interval_ms: 100 } });
for await (const chunk of endpoint.stream(streamed.id)) console.log('stream   →', chunk.output);

console.log('health   →', await endpoint.health());
