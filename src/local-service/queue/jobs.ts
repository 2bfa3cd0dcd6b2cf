import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JobState, ModelId, ModelInput } from '../../contract';
import { MODEL_IDS } from '../../contract';
import { chance, journalFault, modelDurationFor, type FaultConfig } from '../faults';
import { ServiceProblem } from '../http/errors';
import { MediaError, type ModelRunner } from '../media/runner';
import { syncFileAndDirs } from '../store/durable-files';
import type { DeliveryRecord, JobRecord } from '../store/records';
import type { InputStore } from '../store/side-files';
import type { Store } from '../store/store';
import { chainedFrom } from './chain';
import { IllegalTransitionError } from './errors';
import { canTransition } from './transitions';

export interface JobManagerOptions {
  store: Store;
  runner: ModelRunner;
  /** Base of output URLs (`{publicUrl}/files/<id>/<name>`). */
  publicUrl: string;
  filesDir: string;
  concurrencyPerModel: number;
  /** Where inputs live (written before a job's record, removed once it is terminal). */
  inputs: InputStore;
  faults: () => FaultConfig;
  /**
   * Webhooks of a terminal job: `prepare` returns the deliveries journalled in the same record as
   * the terminal state, `start` schedules them once that record is on disk.
   */
  deliveries: { prepare: (job: JobRecord) => DeliveryRecord[]; start: (deliveries: DeliveryRecord[]) => void };
  log: { warn: (obj: object, msg: string) => void };
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
}

/**
 * The queue: bounded concurrency per model, FIFO within a model, every state move checked against
 * the transition table and journalled, credits charged on create and refunded on FAILED/CANCELLED.
 */
export class JobManager {
  private readonly queues = new Map<ModelId, string[]>(MODEL_IDS.map((m) => [m, []]));
  private readonly running = new Map<string, Running>();
  private closing = false;

  constructor(private readonly options: JobManagerOptions) {}

  private get state() {
    return this.options.store.state;
  }

  /**
   * After a restart: a job caught IN_PROGRESS ends FAILED (code `service_restarted`) and is
   * refunded, since its partial render is gone; queued jobs keep their place.
   */
  recover(): void {
    // Inputs of terminal jobs, and of jobs a crash stopped before their record, are not needed.
    this.options.inputs.sweep((id) => {
      const job = this.state.jobs.get(id);
      return job !== undefined && (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS');
    });
    const jobs = [...this.state.jobs.values()].sort((a, b) => a.submittedAt - b.submittedAt);
    for (const job of jobs) {
      if (job.status === 'IN_PROGRESS') {
        this.finish(job.id, 'FAILED', {
          error: {
            code: 'service_restarted',
            message: 'the service restarted while the job was running; credits refunded',
          },
        });
      }
    }
    for (const job of jobs) if (job.status === 'IN_QUEUE') this.queues.get(job.model)?.push(job.id);
    for (const model of MODEL_IDS) this.pump(model);
  }

  /** Looks up an existing job for an `Idempotency-Key`, refusing a different body (409). */
  findIdempotent(key: string, bodyHash: string): JobRecord | null {
    const id = this.state.idempotency.get(key);
    const job = id ? this.state.jobs.get(id) : undefined;
    if (!job) return null;
    if (job.bodyHash !== bodyHash) {
      throw new ServiceProblem(
        'idempotency_conflict',
        `Idempotency-Key was already used with a different request (request_id ${job.id})`,
        { request_id: job.id },
      );
    }
    return job;
  }

  /**
   * Creates and queues job `id`, charging `credits` (402 when the balance is short). Synchronous,
   * so check and charge are atomic. The input is written durably before the job's record; files
   * already fetched into the job's input directory (for the price) are what the render uses.
   */
  create(
    id: string,
    model: ModelId,
    input: ModelInput,
    credits: number,
    billedSeconds: number | null,
    idempotencyKey: string | null,
    bodyHash: string,
    receivedAt?: number,
  ): JobRecord {
    if (this.state.balance < credits) {
      throw new ServiceProblem(
        'insufficient_credits',
        `this job costs ${credits} credits; the balance is ${this.state.balance}`,
        {
          required_credits: credits,
          balance: this.state.balance,
        },
      );
    }
    this.options.inputs.write(id, input);
    const now = Date.now();
    const job: JobRecord = {
      id,
      model,
      status: 'IN_QUEUE',
      idempotencyKey,
      bodyHash,
      creditsCharged: credits,
      creditsRefunded: 0,
      billedSeconds,
      receivedAt: receivedAt ?? now,
      inputRequestId: chainedFrom(this.options.publicUrl, input),
      submittedAt: now,
      startedAt: null,
      completedAt: null,
      result: null,
      error: null,
    };
    this.options.store.commit({
      t: 'job.created',
      job,
      charge: { seq: this.state.nextLedgerSeq(), kind: 'charge', amount: -credits, requestId: job.id, at: now },
    });
    this.queues.get(model)?.push(job.id);
    // Started on the next turn, so the submit answer reports the job as the spec says: IN_QUEUE.
    setImmediate(() => this.pump(model));
    return this.state.jobs.get(job.id) ?? job;
  }

  /** 0-based place in the model's queue while IN_QUEUE, else null. */
  queuePosition(job: JobRecord): number | null {
    if (job.status !== 'IN_QUEUE') return null;
    const index = this.queues.get(job.model)?.indexOf(job.id) ?? -1;
    return index < 0 ? null : index;
  }

  /** Cancels a live job (an in-progress render is aborted); 409 `cancel_too_late` from a terminal state. */
  cancel(id: string): JobRecord {
    const job = this.state.jobs.get(id);
    if (!job) throw new ServiceProblem('not_found', `no request ${id}`);
    if (!canTransition(job.status, 'CANCELLED')) {
      throw new ServiceProblem('cancel_too_late', `the job is already ${job.status}`, {
        job_status: job.status,
        request_id: id,
      });
    }
    const queue = this.queues.get(job.model);
    const index = queue?.indexOf(id) ?? -1;
    if (queue && index >= 0) queue.splice(index, 1);
    this.finish(id, 'CANCELLED', {
      error: { code: 'cancelled', message: 'cancelled by the client; credits refunded' },
    });
    this.running.get(id)?.abort.abort();
    return job;
  }

  /** Stops starting jobs and aborts running renders; their jobs stay IN_PROGRESS on disk (see recover). */
  async close(): Promise<void> {
    this.closing = true;
    const running = [...this.running.values()];
    for (const r of running) r.abort.abort();
    await Promise.allSettled(running.map((r) => r.done));
  }

  private pump(model: ModelId): void {
    if (this.closing) return;
    const queue = this.queues.get(model);
    if (!queue) return;
    while (queue.length > 0 && this.runningCount(model) < this.options.concurrencyPerModel) {
      const id = queue.shift();
      if (id !== undefined) this.start(id);
    }
  }

  private runningCount(model: ModelId): number {
    let n = 0;
    for (const id of this.running.keys()) if (this.state.jobs.get(id)?.model === model) n++;
    return n;
  }

  private start(id: string): void {
    const job = this.state.jobs.get(id);
    if (!job || job.status !== 'IN_QUEUE') return;
    this.transition(job, 'IN_PROGRESS', {});
    const abort = new AbortController();
    const done = this.run(job, abort.signal).finally(() => {
      this.running.delete(id);
      this.pump(job.model);
    });
    this.running.set(id, { abort, done });
  }

  private async run(job: JobRecord, signal: AbortSignal): Promise<void> {
    const faults = this.options.faults();
    // Caught at once: an abort rejects it while the render is still being awaited.
    const minDuration = sleep(modelDurationFor(faults, job.model), signal).catch(() => undefined);
    const injectFailure = chance(faults.failureRate);
    const startedAt = Date.now();
    let outcome: { files: { fileName: string; contentType: string }[] } | { error: { code: string; message: string } };
    try {
      const input = await this.options.inputs.read(job.id);
      const rendered = await this.options.runner.render({
        model: job.model,
        input,
        requestId: job.id,
        outputDir: path.join(this.options.filesDir, job.id),
        prefetchedDir: this.options.inputs.dirOf(job.id),
        signal,
      });
      // Files are served from `<filesDir>/<id>/<fileName>`; move any that were written elsewhere.
      const outputDir = path.join(this.options.filesDir, job.id);
      for (const file of rendered.files) {
        const target = path.join(outputDir, file.fileName);
        if (path.resolve(file.path) !== path.resolve(target)) {
          await fs.promises.mkdir(outputDir, { recursive: true });
          await fs.promises.copyFile(file.path, target);
        }
        // On disk (file and directory entries) before COMPLETED is journalled.
        await syncFileAndDirs(target, this.options.filesDir);
      }
      outcome = { files: rendered.files };
    } catch (error) {
      outcome = { error: renderError(error) };
    }
    await minDuration;
    // A cancel (or shutdown) while rendering already settled the job; nothing more to record.
    if (signal.aborted || this.closing || this.state.jobs.get(job.id)?.status !== 'IN_PROGRESS') return;
    if ('error' in outcome) {
      this.finish(job.id, 'FAILED', { error: outcome.error });
      return;
    }
    if (injectFailure) {
      journalFault(this.options.store, { kind: 'job_failed', requestId: job.id, idempotencyKey: job.idempotencyKey });
      this.finish(job.id, 'FAILED', {
        error: { code: 'generation_failed', message: 'the generation failed (injected fault); credits refunded' },
      });
      return;
    }
    const current = this.state.jobs.get(job.id) ?? job;
    const result = {
      request_id: job.id,
      status: 'COMPLETED' as JobState,
      model: job.model,
      credits_used: current.creditsCharged,
      timings: { inference_seconds: Math.round(Date.now() - startedAt) / 1000 },
      videos: outcome.files.map((file) => ({
        url: `${this.options.publicUrl}/files/${encodeURIComponent(job.id)}/${encodeURIComponent(file.fileName)}`,
        file_name: file.fileName,
        content_type: file.contentType,
      })),
    };
    this.finish(job.id, 'COMPLETED', { result });
  }

  /**
   * Moves a job to a terminal state, refunding FAILED and CANCELLED, with the event's deliveries
   * in the same journal record; then starts them and drops the job's inputs.
   */
  private finish(
    id: string,
    to: 'COMPLETED' | 'FAILED' | 'CANCELLED',
    extra: { result?: Record<string, unknown>; error?: { code: string; message: string } },
  ): void {
    const job = this.state.jobs.get(id);
    if (!job) return;
    if (!canTransition(job.status, to)) throw new IllegalTransitionError(job.id, job.status, to);
    const at = Date.now();
    const deliveries = this.options.deliveries.prepare({
      ...job,
      status: to,
      completedAt: at,
      result: extra.result ?? job.result,
      error: extra.error ?? job.error,
    });
    this.transition(job, to, { ...extra, ...(deliveries.length > 0 ? { deliveries } : {}) }, at);
    this.options.deliveries.start(deliveries);
    void this.options.inputs
      .remove(id)
      .catch((error: unknown) =>
        this.options.log.warn({ requestId: id, err: error }, 'could not remove the inputs of a finished job'),
      );
  }

  private transition(
    job: JobRecord,
    to: JobState,
    extra: {
      result?: Record<string, unknown>;
      error?: { code: string; message: string };
      deliveries?: DeliveryRecord[];
    },
    at = Date.now(),
  ): void {
    if (!canTransition(job.status, to)) throw new IllegalTransitionError(job.id, job.status, to);
    const refundable = (to === 'FAILED' || to === 'CANCELLED') && job.creditsCharged - job.creditsRefunded > 0;
    this.options.store.commit({
      t: 'job.transition',
      id: job.id,
      to,
      at,
      ...extra,
      ...(refundable
        ? {
            refund: {
              seq: this.state.nextLedgerSeq(),
              kind: 'refund' as const,
              amount: job.creditsCharged - job.creditsRefunded,
              requestId: job.id,
              at,
            },
          }
        : {}),
    });
  }
}

function renderError(error: unknown): { code: string; message: string } {
  if (error instanceof MediaError) return { code: error.code, message: error.message };
  return { code: 'render_failed', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Waits `ms` by the wall clock the job records are written in: Node's timers may fire a millisecond
 * before Date.now() reaches the target, so a timer that fires early waits the rest (a job never
 * finishes before its duration).
 */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    if (signal.aborted) return reject(new Error('aborted'));
    let timer: NodeJS.Timeout;
    const arm = (wait: number) => {
      timer = setTimeout(() => {
        const rest = until - Date.now();
        if (rest > 0) return arm(rest);
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, wait);
    };
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    arm(ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
