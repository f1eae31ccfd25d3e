export interface GroupCommitOptions {
  /**
   * Batches in flight at once (default 1). One is best measured on PostgreSQL too: the next batch
   * fills while one runs, and each statement costs a round trip and a commit (bench/, side by
   * side: 2 or 4 in flight gave no more jobs/s and a lower /run intake).
   */
  concurrency?: number;
  /** Largest batch (bounds statement size and the parameters of one statement). */
  maxBatch?: number;
}

interface Call<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for one kind of statement: calls made while `concurrency` batches are in flight
 * wait and then run together, as one statement. At low load a call runs at once, alone (no added
 * latency); under load N concurrent calls cost one round trip and one commit instead of N.
 *
 * A call never joins a batch already running: its statement starts after the call was made, so
 * a caller that noted something before calling (a change mark, say) reads or writes after it.
 *
 * `run` gets the items in call order and returns one result per item, in the same order. When a
 * batch of several fails, its items are run again one by one, so that one bad item (a constraint,
 * a value the database refuses) fails only its own call.
 */
export class GroupCommit<I, O> {
  private readonly waiting: Array<Call<I, O>> = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly concurrency: number;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    options: GroupCommitOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.concurrency = options.concurrency ?? 1;
  }

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      // Calls made in the same turn of the event loop go together even when nothing is in flight:
      // requests that arrived together are handled in one turn, and the embedded database runs
      // in this thread, so nothing arrives while one of its statements runs.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.waiting.length) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.execute(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async execute(batch: Array<Call<I, O>>): Promise<void> {
    try {
      const results = await this.runChecked(batch.map((c) => c.item));
      batch.forEach((c, i) => c.resolve(results[i]));
    } catch (err) {
      if (batch.length === 1) return batch[0].reject(err);
      for (const c of batch) {
        try {
          c.resolve((await this.runChecked([c.item]))[0]);
        } catch (own) {
          c.reject(own);
        }
      }
    }
  }

  private async runChecked(items: I[]): Promise<O[]> {
    const results = await this.run(items);
    if (results.length !== items.length)
      throw new Error(`group commit: ${results.length} results for ${items.length} items`);
    return results;
  }
}
