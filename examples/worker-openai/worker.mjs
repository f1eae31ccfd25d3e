#!/usr/bin/env node
// A worker shaped like runpod-workers/worker-vllm, for the OpenAI-compatible route
// (`/v2/<endpoint>/openai/v1/*`), without a model: it "generates" by echoing the last user message.
//
// Runplane turns an OpenAI request into a job with input {openai_route, openai_input}:
//   - "stream": true   → the handler yields ready-made server-sent-event text ("data: {...}\n\n"),
//                        which Runplane relays to the client as it arrives;
//   - otherwise        → the handler yields one OpenAI response object; with returnAggregateStream
//                        the job output is [response] and Runplane answers its first element.
// Routes: /v1/chat/completions, /v1/completions, /v1/models.
import { start } from '@runplane/worker-sdk';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const MODEL = process.env.OPENAI_SERVED_MODEL_NAME ?? 'runplane-echo';
const TOKEN_DELAY_MS = Number(process.env.TOKEN_DELAY_MS ?? 20);

function promptOf(route, body) {
  if (route === '/v1/chat/completions') {
    const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
    return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
  }
  return Array.isArray(body.prompt) ? body.prompt.join(' ') : String(body.prompt ?? '');
}

function usage(prompt, text) {
  const p = prompt.split(/\s+/).filter(Boolean).length;
  const c = text.split(/\s+/).filter(Boolean).length;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** One OpenAI response object (non-streaming). */
function response(route, body, text) {
  const base = {
    id: `cmpl-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? MODEL,
    usage: usage(promptOf(route, body), text),
  };
  if (route === '/v1/chat/completions') {
    return {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
    };
  }
  return {
    ...base,
    object: 'text_completion',
    choices: [{ index: 0, text, finish_reason: 'stop', logprobs: null }],
  };
}

/** The same answer as server-sent events, a word at a time, ending with [DONE]. */
async function* events(route, body, text, signal) {
  const id = `cmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const chat = route === '/v1/chat/completions';
  const chunk = (delta, finish) => ({
    id,
    created,
    model: body.model ?? MODEL,
    object: chat ? 'chat.completion.chunk' : 'text_completion',
    choices: [
      chat
        ? { index: 0, delta, finish_reason: finish, logprobs: null }
        : { index: 0, text: delta.content ?? '', finish_reason: finish, logprobs: null },
    ],
  });
  if (chat) yield `data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }, null))}\n\n`;
  const words = text.split(/(?<= )/);
  for (const word of words) {
    await sleep(TOKEN_DELAY_MS, undefined, { signal });
    yield `data: ${JSON.stringify(chunk({ content: word }, null))}\n\n`;
  }
  yield `data: ${JSON.stringify(chunk({}, 'stop'))}\n\ndata: [DONE]\n\n`;
}

async function* handler(job, { signal }) {
  const { openai_route: route, openai_input: body = {} } = job.input ?? {};
  if (route === '/v1/models') {
    yield {
      object: 'list',
      data: [{ id: MODEL, object: 'model', created: 0, owned_by: 'runplane' }],
    };
    return;
  }
  if (route !== '/v1/chat/completions' && route !== '/v1/completions') {
    // worker-vllm's error shape: the job fails with this object as its error.
    yield {
      error: {
        message: `route ${route} is not supported by this worker`,
        type: 'worker_error',
        code: null,
      },
    };
    return;
  }
  const text = `You said: ${promptOf(route, body)}`;
  if (body.stream === true) yield* events(route, body, text, signal);
  else yield response(route, body, text);
}

start({
  handler,
  returnAggregateStream: true,
  concurrency: Number(process.env.WORKER_CONCURRENCY) || 4,
});
