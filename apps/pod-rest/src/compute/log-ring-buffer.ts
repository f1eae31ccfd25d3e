import { StringDecoder } from 'node:string_decoder';
import type { LogLine } from './compute-provider.js';

export interface LogRingBufferOptions {
  /** Lines kept (oldest dropped first). */
  maxLines?: number;
  /** Characters kept over all lines (oldest dropped first). */
  maxChars?: number;
  /** A longer line is cut into pieces of this size, so one runaway line cannot hold the buffer. */
  maxLineChars?: number;
}

type Stream = LogLine['stream'];

/**
 * A workload's output as lines, bounded in count and size: a chatty worker must not grow the
 * server's memory. Chunks are decoded per stream (a UTF-8 character may straddle two chunks) and
 * split on newlines; a trailing partial line waits for its end or for `flush()`.
 */
export class LogRingBuffer {
  private readonly maxLines: number;
  private readonly maxChars: number;
  private readonly maxLineChars: number;
  private readonly lines: LogLine[] = [];
  private head = 0; // index of the oldest kept line (avoids shifting the array on every drop)
  private chars = 0;
  private readonly pending: Record<Stream, string> = { stdout: '', stderr: '' };
  private readonly decoders: Record<Stream, StringDecoder> = {
    stdout: new StringDecoder('utf8'),
    stderr: new StringDecoder('utf8'),
  };

  /** `onLine` sees every line as it is added, before any is dropped. */
  constructor(
    options: LogRingBufferOptions = {},
    private readonly onLine?: (line: LogLine) => void,
  ) {
    this.maxLines = options.maxLines ?? 1000;
    this.maxChars = options.maxChars ?? 1024 * 1024;
    this.maxLineChars = options.maxLineChars ?? 16 * 1024;
  }

  write(stream: Stream, chunk: Buffer | string): void {
    const text =
      this.pending[stream] +
      (typeof chunk === 'string' ? chunk : this.decoders[stream].write(chunk));
    const parts = text.split('\n');
    this.pending[stream] = parts.pop() ?? '';
    for (const part of parts) this.add(stream, part.endsWith('\r') ? part.slice(0, -1) : part);
    while (this.pending[stream].length > this.maxLineChars) {
      this.add(stream, this.pending[stream].slice(0, this.maxLineChars));
      this.pending[stream] = this.pending[stream].slice(this.maxLineChars);
    }
  }

  /** Emits the partial last lines (the stream ended without a newline). */
  flush(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.pending[stream] + this.decoders[stream].end();
      this.pending[stream] = '';
      if (rest) this.add(stream, rest);
    }
  }

  /** Kept lines, oldest first; `tail` limits to the newest n. */
  read(tail?: number): LogLine[] {
    const kept = this.lines.slice(this.head);
    return tail === undefined ? kept : kept.slice(Math.max(0, kept.length - tail));
  }

  private add(stream: Stream, text: string): void {
    for (let i = 0; i < text.length || i === 0; i += this.maxLineChars) {
      const piece = text.slice(i, i + this.maxLineChars);
      const line: LogLine = { at: new Date(), stream, text: piece };
      this.lines.push(line);
      this.onLine?.(line);
      this.chars += piece.length;
    }
    while (
      this.lines.length - this.head > this.maxLines ||
      (this.chars > this.maxChars && this.lines.length - this.head > 1)
    ) {
      this.chars -= this.lines[this.head].text.length;
      this.head++;
    }
    // Compact once the dropped prefix dominates, keeping drops O(1) amortised.
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines.splice(0, this.head);
      this.head = 0;
    }
  }
}
