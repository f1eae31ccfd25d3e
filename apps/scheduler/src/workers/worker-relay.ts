import { Injectable } from '@nestjs/common';
import { RELAY_SILENT_AFTER_MS } from '@runplane/contracts';

/**
 * Whether queue-api is relaying workers' calls to this replica: its replicas announce it on the
 * bus (`QueueApiSignals.workerRelay`). While none has lately, workers cannot be heard, so their
 * silence proves nothing (the sweeper counts that time as deaf).
 */
@Injectable()
export class WorkerRelay {
  private heardAt = Number.NEGATIVE_INFINITY;

  /** A queue-api replica announced itself. */
  heard(): void {
    this.heardAt = Date.now();
  }

  /** True when some queue-api replica announced itself within the last RELAY_SILENT_AFTER_MS. */
  isRelaying(): boolean {
    return Date.now() - this.heardAt <= RELAY_SILENT_AFTER_MS;
  }
}
