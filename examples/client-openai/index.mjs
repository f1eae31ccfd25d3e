#!/usr/bin/env node
// The official OpenAI JS client against an endpoint's OpenAI-compatible route, exactly as RunPod
// documents it for worker-vllm: base URL <server>/v2/<endpoint>/openai/v1, the API key as OpenAI key.
//
//   RUNPLANE_URL=http://127.0.0.1:8080 RUNPLANE_API_KEY=<key> ENDPOINT_ID=<id> node examples/client-openai/index.mjs
//
// ENDPOINT_ID: an endpoint whose workers speak the OpenAI route, e.g. vLLM, or the model-free
// stand-in examples/worker-openai/worker.mjs. `npm install openai` (6.x runs on Node 20).
import OpenAI from 'openai';

const { RUNPLANE_URL = 'http://127.0.0.1:8080', RUNPLANE_API_KEY, ENDPOINT_ID } = process.env;
if (!RUNPLANE_API_KEY || !ENDPOINT_ID) throw new Error('set RUNPLANE_API_KEY and ENDPOINT_ID');

const openai = new OpenAI({
  apiKey: RUNPLANE_API_KEY,
  baseURL: `${RUNPLANE_URL}/v2/${ENDPOINT_ID}/openai/v1`,
});

const models = await openai.models.list();
const model = models.data[0].id;
console.log(
  'models   →',
  models.data.map((m) => m.id),
);

const completion = await openai.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Hello there' }],
});
console.log('chat     →', completion.choices[0].message.content);

process.stdout.write('stream   → ');
const stream = await openai.chat.completions.create({
  model,
  stream: true,
  messages: [{ role: 'user', content: 'Count to five' }],
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
process.stdout.write('\n');
