import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { signWebhook } from '@runplane/contracts';
import { LOGGER, RunplaneMetrics, type Logger } from '@runplane/platform';
import { WebhookHttpClient, type AttemptOutcome } from '../delivery-http/webhook-http-client.js';
import { WebhookSettings } from '../settings.js';
import { SigningSecrets } from '../signing/signing-secrets.js';
import { DeliveriesRepository, type DeliveryRow } from './deliveries.repository.js';

/** A lease outlives the attempt's timeout by this much before another instance may take it over. */
const LEASE_MARGIN_MS = 20_000;
/** Back-off when the vault cannot give the signing secret (no attempt is counted). */
const SECRET_RETRY_MS = 5000;

/**
 * Makes the attempts. The schedule lives in the database (`nextAttemptAt`, leases), not in
 * timers: a restart, a crash or another replica simply finds what is due. In-memory timers only
 * wake the loop early (new deliveries, the next retry); it also polls every `pollMs`.
 * Concurrency is capped per instance and per receiving host: a slow receiver occupies at most
 * `perHostConcurrency` slots while others are served.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  /** Attempts in flight or reserved, per receiving host. */
  private readonly busyHosts = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  /** Slots reserved for new deliveries still being created (`reserve`). */
  private reserved = 0;
  /**
   * False once a pass found nothing due while no host was at its cap: an attempt ending then has
   * nothing to make room for, and starts no pass. Anything that may add due work sets it (kick).
   */
  private mayHaveDue = true;
  private poll?: NodeJS.Timeout;
  private wakeAt?: { at: number; timer: NodeJS.Timeout };
  private pass?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly http: WebhookHttpClient,
    private readonly secrets: SigningSecrets,
    private readonly settings: WebhookSettings,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: RunplaneMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.poll = setInterval(() => this.kick(), this.settings.pollMs);
    this.poll.unref();
    this.kick();
  }

  /** Stops claiming; attempts in flight finish and are recorded (the HTTP client closes after). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poll);
    if (this.wakeAt) clearTimeout(this.wakeAt.timer);
    await this.pass;
    await Promise.allSettled([...this.running]);
  }

  /** Looks for due attempts now (coalesced: a call during a pass schedules one more). */
  kick(): void {
    this.mayHaveDue = true;
    if (this.stopped) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.claimAndStart()
      .catch((err) =>
        this.logger.warn(
          { err: String(err) },
          'webhook-sender: claiming due deliveries failed; retrying',
        ),
      )
      .finally(() => {
        this.pass = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * A slot for a new delivery to `host`, when the instance and the host have one free: the
   * delivery is then created leased until the time returned and started with `startReserved`, no
   * pass needed to find it (or the slot is given back with `releaseReserved` when nothing was
   * created). Undefined: create it unleased and `kick()`.
   */
  reserve(host: string): Date | undefined {
    if (this.stopped || this.running.size + this.reserved >= this.settings.concurrency) return;
    if ((this.busyHosts.get(host) ?? 0) >= this.settings.perHostConcurrency) return;
    this.reserved += 1;
    this.busyHosts.set(host, (this.busyHosts.get(host) ?? 0) + 1);
    return new Date(Date.now() + this.settings.timeoutMs + LEASE_MARGIN_MS);
  }

  /**
   * Starts the attempt of a delivery created leased to this instance in a reserved slot (once
   * stopping, none starts: the lease running out brings it back).
   */
  startReserved(row: DeliveryRow): void {
    this.reserved -= 1;
    if (this.stopped) this.freeHostSlot(row.host);
    else this.run(row);
  }

  /** Gives back a reserved slot whose delivery was not created. */
  releaseReserved(host: string): void {
    this.reserved -= 1;
    this.freeHostSlot(host);
    this.kick();
  }

  private async claimAndStart(): Promise<void> {
    let now: Date;
    let started = 0;
    for (;;) {
      const free = this.settings.concurrency - this.running.size - this.reserved;
      if (free <= 0 || this.stopped) return;
      now = new Date();
      const rows = await this.deliveries.claimDue(
        free,
        now,
        new Date(now.getTime() + this.settings.timeoutMs + LEASE_MARGIN_MS),
        Object.fromEntries(this.busyHosts),
        this.settings.perHostConcurrency,
      );
      for (const row of rows) this.start(row);
      started += rows.length;
      if (!rows.length && !this.someHostAtCap()) this.mayHaveDue = false;
      if (rows.length < free) break;
    }
    // Only a later attempt needs a timer, and only once nothing is left to start: the attempts
    // just started kick another pass when they end, and a retry this instance schedules sets its
    // own timer (the poll finds those of other instances). One due now and not taken waits for a
    // slot, whose release kicks a pass.
    if (started) return;
    const next = await this.deliveries.nextDueAfter(now);
    if (next) this.wakeUpAt(next.getTime());
  }

  private start(row: DeliveryRow): void {
    this.busyHosts.set(row.host, (this.busyHosts.get(row.host) ?? 0) + 1);
    this.run(row);
  }

  /** Makes the attempt in a slot already counted for its host. */
  private run(row: DeliveryRow): void {
    const run = this.attempt(row)
      .catch((err) =>
        this.logger.error(
          { err: String(err), deliveryId: row.id },
          'webhook-sender: recording an attempt failed; the lease will bring it back',
        ),
      )
      .finally(() => {
        this.freeHostSlot(row.host);
        this.running.delete(run);
        if (this.mayHaveDue) this.kick(); // a slot is free for what may wait
      });
    this.running.add(run);
  }

  private someHostAtCap(): boolean {
    for (const n of this.busyHosts.values()) if (n >= this.settings.perHostConcurrency) return true;
    return false;
  }

  private freeHostSlot(host: string): void {
    const n = (this.busyHosts.get(host) ?? 1) - 1;
    if (n > 0) this.busyHosts.set(host, n);
    else this.busyHosts.delete(host);
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    let secret: string;
    try {
      secret = await this.secrets.forOwner(row.ownerId);
    } catch (err) {
      // Not the receiver's fault: no attempt is counted.
      this.logger.warn(
        { err: String(err), deliveryId: row.id },
        'webhook-sender: signing secret unavailable; postponing the delivery',
      );
      await this.deliveries.postpone(row.id, new Date(Date.now() + SECRET_RETRY_MS));
      return;
    }
    const outcome = await this.http.post(
      row.url,
      { ...signWebhook(secret, row.id, row.body) },
      row.body,
    );
    const updated = await this.deliveries.recordAttempt(
      row,
      outcome,
      new Date(),
      this.settings.retryDelayMs,
    );
    this.metrics.webhookAttemptDuration.observe(
      { outcome: attemptOutcome(outcome) },
      outcome.latencyMs / 1000,
    );
    if (outcome.ok || updated.status === 'failed')
      this.metrics.webhookDeliveries.inc({ result: outcome.ok ? 'delivered' : 'failed' });
    const log = {
      deliveryId: row.id,
      jobId: row.jobId,
      attempt: updated.attemptCount,
      statusCode: outcome.statusCode,
      latencyMs: outcome.latencyMs,
      status: updated.status,
    };
    if (outcome.ok) this.logger.debug(log, 'webhook delivered');
    else
      this.logger.info(
        { ...log, error: outcome.error },
        updated.status === 'failed'
          ? 'webhook failed: no attempts left'
          : 'webhook attempt failed; will retry',
      );
    if (updated.status === 'pending') this.wakeUpAt(updated.nextAttemptAt.getTime());
  }

  /** Wakes the loop at `at` (keeps only the earliest such wake-up). */
  private wakeUpAt(at: number): void {
    if (this.stopped || (this.wakeAt && this.wakeAt.at <= at && this.wakeAt.at > Date.now()))
      return;
    if (this.wakeAt) clearTimeout(this.wakeAt.timer);
    const timer = setTimeout(
      () => {
        this.wakeAt = undefined;
        this.kick();
      },
      Math.max(0, at - Date.now()) + 5,
    );
    timer.unref();
    this.wakeAt = { at, timer };
  }
}

/** The metrics label of an attempt: success, http_error (non-2xx), timeout, refused (egress guard), network_error. */
function attemptOutcome(outcome: AttemptOutcome): string {
  if (outcome.ok) return 'success';
  if (outcome.statusCode !== null) return 'http_error';
  if (outcome.error?.startsWith('refused:')) return 'refused';
  if (outcome.error?.startsWith('timed out')) return 'timeout';
  return 'network_error';
}
