// A Runplane worker in TypeScript with @runplane/worker-sdk: typed input, streaming, progress and
// cancellation. Build with `npx tsc -p examples/worker-typescript` and run dist/worker.js.
import { start, type Handler } from '@runplane/worker-sdk';
import { setTimeout as sleep } from 'node:timers/promises';

interface Input {
  /** Text to turn into upper case, one word at a time. */
  text: string;
  /** Milliseconds per word (default 50). */
  delay_ms?: number;
  /** Stream the words as they are done (read them with /stream). */
  stream?: boolean;
}

async function* words(input: Input, signal: AbortSignal): AsyncGenerator<string> {
  for (const word of input.text.split(/\s+/).filter(Boolean)) {
    await sleep(input.delay_ms ?? 50, undefined, { signal }); // rejects when the job is cancelled
    yield word.toUpperCase();
  }
}

const handler: Handler<Input> = async (job, { signal, progress, log }) => {
  if (typeof job.input.text !== 'string') return { error: 'input.text must be a string' };
  if (job.input.stream) return words(job.input, signal);
  const done: string[] = [];
  for await (const word of words(job.input, signal)) {
    done.push(word);
    await progress({ words: done.length });
  }
  log.info(`shouted ${done.length} words`);
  return { text: done.join(' '), words: done.length };
};

start({ handler, concurrency: 2 });
