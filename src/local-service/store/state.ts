import type {
  DeliveryRecord,
  EndpointRecord,
  InjectedFaultRecord,
  JobRecord,
  JournalEntry,
  KeyRecord,
  LedgerEntry,
  SnapshotState,
} from './records';

/** Sets `fields` on the record `id` of `records` (a journal entry for a record that is gone changes nothing). */
function patch<T extends object>(records: Map<string, T>, id: string, fields: Partial<T>): void {
  const record = records.get(id);
  if (record) Object.assign(record, fields);
}

/**
 * The durable state in memory, changed only by applying journal entries, so that replaying the
 * journal after a crash rebuilds exactly what was acknowledged.
 */
export class ServiceState {
  readonly jobs = new Map<string, JobRecord>();
  readonly keys = new Map<string, KeyRecord>();
  readonly endpoints = new Map<string, EndpointRecord>();
  readonly deliveries = new Map<string, DeliveryRecord>();
  readonly ledger: LedgerEntry[] = [];
  /** Faults injected so far (fault injection), oldest first. */
  readonly injectedFaults: InjectedFaultRecord[] = [];
  /** `Idempotency-Key` → request id. */
  readonly idempotency = new Map<string, string>();
  private balanceValue = 0;

  get balance(): number {
    return this.balanceValue;
  }

  nextFaultSeq(): number {
    return (this.injectedFaults[this.injectedFaults.length - 1]?.seq ?? 0) + 1;
  }

  nextLedgerSeq(): number {
    return (this.ledger[this.ledger.length - 1]?.seq ?? 0) + 1;
  }

  apply(entry: JournalEntry): void {
    switch (entry.t) {
      case 'key.created':
        this.keys.set(entry.key.id, { ...entry.key });
        return;
      case 'key.revoked': {
        const key = this.keys.get(entry.id);
        if (key) key.revokedAt = entry.at;
        return;
      }
      case 'ledger':
        this.addLedger(entry.entry);
        return;
      case 'job.created':
        this.jobs.set(entry.job.id, { ...entry.job });
        if (entry.job.idempotencyKey) this.idempotency.set(entry.job.idempotencyKey, entry.job.id);
        this.addLedger(entry.charge);
        return;
      case 'job.transition': {
        const job = this.jobs.get(entry.id);
        if (!job) return;
        job.status = entry.to;
        if (entry.to === 'IN_PROGRESS') job.startedAt = entry.at;
        else job.completedAt = entry.at;
        if (entry.result) job.result = entry.result;
        if (entry.error) job.error = entry.error;
        if (entry.refund) {
          job.creditsRefunded += entry.refund.amount;
          this.addLedger(entry.refund);
        }
        for (const delivery of entry.deliveries ?? []) this.deliveries.set(delivery.id, { ...delivery });
        return;
      }
      case 'endpoint.created':
        this.endpoints.set(entry.endpoint.id, { ...entry.endpoint });
        return;
      case 'endpoint.rotated':
        patch(this.endpoints, entry.id, {
          secret: entry.secret,
          previousSecret: entry.previousSecret,
          previousSecretExpiresAt: entry.previousSecretExpiresAt,
        });
        return;
      case 'endpoint.deleted':
        this.endpoints.delete(entry.id);
        for (const delivery of this.deliveries.values()) {
          if (delivery.endpointId === entry.id && delivery.state === 'pending') {
            delivery.state = 'abandoned';
            delivery.nextAttemptAt = null;
          }
        }
        return;
      case 'delivery.created':
        this.deliveries.set(entry.delivery.id, { ...entry.delivery });
        return;
      case 'delivery.attempted': {
        const delivery = this.deliveries.get(entry.id);
        patch(this.deliveries, entry.id, {
          attempts: entry.attempts,
          state: entry.state,
          nextAttemptAt: entry.nextAttemptAt,
          lastStatus: entry.lastStatus,
          lastError: entry.lastError,
        });
        if (delivery && entry.dueAt !== undefined && entry.sentAt !== undefined && entry.endedAt !== undefined) {
          delivery.attemptLog = [
            ...(delivery.attemptLog ?? []),
            {
              dueAt: entry.dueAt,
              sentAt: entry.sentAt,
              endedAt: entry.endedAt,
              status: entry.lastStatus,
              nextAttemptAt: entry.nextAttemptAt,
            },
          ];
        }
        return;
      }
      case 'fault':
        this.injectedFaults.push({ ...entry.fault });
        return;
      case 'snapshot':
        for (const fault of entry.state.injectedFaults ?? []) this.injectedFaults.push({ ...fault });
        for (const job of entry.state.jobs) {
          this.jobs.set(job.id, { ...job });
          if (job.idempotencyKey) this.idempotency.set(job.idempotencyKey, job.id);
        }
        for (const key of entry.state.keys) this.keys.set(key.id, { ...key });
        for (const endpoint of entry.state.endpoints) this.endpoints.set(endpoint.id, { ...endpoint });
        for (const delivery of entry.state.deliveries) this.deliveries.set(delivery.id, { ...delivery });
        for (const ledgerEntry of entry.state.ledger) this.addLedger(ledgerEntry);
        return;
    }
  }

  /** Everything durable, for a compaction. */
  snapshot(): SnapshotState {
    return {
      jobs: [...this.jobs.values()],
      keys: [...this.keys.values()],
      endpoints: [...this.endpoints.values()],
      ledger: [...this.ledger],
      // Settled deliveries are kept too: tests and operators read their outcome.
      deliveries: [...this.deliveries.values()],
      injectedFaults: [...this.injectedFaults],
    };
  }

  private addLedger(entry: LedgerEntry): void {
    this.ledger.push({ ...entry });
    this.balanceValue += entry.amount;
  }
}
