import { Injectable } from '@nestjs/common';
import { Bus } from '@runplane/bus';
import { DatabaseTargets } from '@runplane/database';

export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: { bus: boolean; databases: boolean; accepting: boolean };
  problems?: string[];
}

/** /readyz: storage and bus reachable, and not shutting down (so load balancers drain us first). */
@Injectable()
export class ReadinessService {
  private draining = false;

  constructor(
    private readonly bus: Bus,
    private readonly databases: DatabaseTargets,
  ) {}

  /** Called when shutdown starts; long polls and /readyz react to it. */
  startDraining(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async report(): Promise<ReadinessReport> {
    const problems: string[] = [];
    const bus = this.bus.isReady();
    if (!bus) problems.push('bus is not connected');
    const down = await this.databases.unreachable();
    for (const service of down) problems.push(`database of ${service} is not reachable`);
    if (this.draining) problems.push('shutting down');
    const checks = { bus, databases: down.length === 0, accepting: !this.draining };
    const ok = bus && down.length === 0 && !this.draining;
    return ok ? { status: 'ok', checks } : { status: 'unavailable', checks, problems };
  }
}
