import type { GenerationRequest, ModelId, ModelInputs } from '../contract';
import type { ServiceClient } from '../client/types';
import { cancelUnlessEnded } from './cancel-job';
import type { SlotCaps, SlotGrant, SlotRelease, SlotRequest, SlotStore, WaiterAhead, WaiterSubmit } from './slot-store';

/** How grants reach waiting workflows (./slot-signaller.ts over a Temporal client). */
export interface SlotSignaller {
  /** Signals the grant to its run: `gone` when the run is closed or unknown; throws when Temporal could not be asked. */
  grant(grant: SlotGrant): Promise<'signalled' | 'gone'>;
  /** Whether the run is still open (false when closed or unknown); throws when Temporal could not be asked. */
  running(workflowId: string, runId: string): Promise<boolean>;
}

/** Options of AccountSlots. */
export interface AccountSlotsOptions {
  store: SlotStore;
  caps: SlotCaps;
  /** Called late (the worker's client may be made after the activities). */
  signaller: () => SlotSignaller;
  /** A slot is looked at by the reaper once it was granted this long ago. Default 30 s. */
  reapAfterMs?: number;
  /** A grant whose signal is not known to have arrived is signalled again after this long. Default 5 s. */
  resignalAfterMs?: number;
  /** Told of every grant this process made (metrics: its fairness key). */
  onGrant?: (grant: SlotGrant) => void;
  /**
   * The service, with the account's key: a grant that carries its waiter's submit is submitted here,
   * before the waiter is signalled, and a job submitted so that no pipeline adopted is cancelled.
   * Absent: grants are only signalled (the waiter submits after its workflow task).
   */
  service?: Pick<ServiceClient, 'submit' | 'cancel'>;
  /** Told of what could not be done for a waiter (a submit left to its pipeline, a cancel that failed). */
  onProblem?: (message: string, details: Record<string, unknown>) => void;
  now?: () => number;
}

/** What one reaper sweep did. */
export interface SweepResult {
  resignalled: number;
  reaped: number;
  granted: number;
}

/** At most this many slots are looked at per sweep (caps are far below it; the next sweep goes on). */
const SWEEP_LIMIT = 500;

/**
 * The account's slots as a worker uses them: asks the store for a slot (granted at once, or queued),
 * frees one and signals the workflows its room was granted to, and reaps slots whose holder's run
 * closed without freeing them (terminated, or its worker killed between the end and the release).
 * Nothing is kept in memory: a worker that dies leaves rows another worker's reaper or release ends.
 */
export class AccountSlots {
  readonly caps: SlotCaps;
  private readonly store: SlotStore;
  private readonly now: () => number;
  private readonly reapAfterMs: number;
  private readonly resignalAfterMs: number;

  constructor(private readonly options: AccountSlotsOptions) {
    this.store = options.store;
    this.caps = options.caps;
    this.now = options.now ?? Date.now;
    this.reapAfterMs = options.reapAfterMs ?? 30_000;
    this.resignalAfterMs = options.resignalAfterMs ?? 5_000;
  }

  /** Whether any cap is set (otherwise no job needs a slot). */
  get capped(): boolean {
    return this.caps.account !== undefined || Object.keys(this.caps.models).length > 0;
  }

  /**
   * `granted`: `request` took a slot now; `held`: it was granted one earlier (by a release: see `ahead`);
   * `waiting`: it was queued (its workflow waits for `slotGranted`).
   */
  async acquire(request: SlotRequest): Promise<'granted' | 'held' | 'waiting'> {
    const answer = await this.store.acquire(request, this.caps, this.now());
    // A second ask for a slot granted earlier is counted by the release that granted it, not here.
    if (answer === 'granted') this.options.onGrant?.(request);
    return answer;
  }

  /** Keeps a queued holder's submit beside its place, for the process that grants it a slot to send. */
  async keepSubmit(holder: string, submit: WaiterSubmit): Promise<void> {
    await this.store.keepSubmit(holder, submit);
  }

  /** What the process that granted `holder` its slot submitted for it (the job, or the submit it kept). */
  ahead(holder: string): Promise<WaiterAhead> {
    return this.store.ahead(holder);
  }

  /**
   * Frees `holder`'s slot (or its place in the queue) and signals the workflows its room went to. A job
   * submitted for `holder` that its pipeline never took (it was cancelled, or its run is gone) is cancelled.
   */
  async release(holder: string): Promise<void> {
    await this.freed(await this.store.release(holder, this.caps, this.now()));
  }

  private async freed({ grants, unadopted }: SlotRelease): Promise<void> {
    // The room goes on first: the cancel below waits on the service.
    await this.hand(grants);
    if (unadopted) await this.cancelUnadopted(unadopted);
  }

  /** Names the job `holder`'s slot went to, so the bridge can free it when the job's terminal webhook arrives. */
  async attachRequest(holder: string, requestId: string): Promise<void> {
    await this.store.attachRequest(holder, requestId);
  }

  /**
   * Frees the slot of job `requestId`, which reached a terminal state (the bridge committed its webhook),
   * and signals the workflows its room was granted to. The pipeline's own release later finds nothing.
   */
  async releaseRequest(requestId: string): Promise<void> {
    await this.hand(await this.store.releaseRequest(requestId, this.caps, this.now()));
  }

  /**
   * Submits each grant's waiting job where it carries one (submitForWaiter), then signals it; a grant to
   * a run that is gone is freed again (its room goes on to the next waiter, a job submitted for it is
   * cancelled). A grant whose signal failed stays `granted`: the reaper signals it again.
   */
  private async hand(grants: SlotGrant[]): Promise<void> {
    let pending = grants;
    while (pending.length > 0) {
      const signalled: string[] = [];
      const next: SlotGrant[] = [];
      for (const grant of pending) {
        if (grant.fairnessKey !== undefined) this.options.onGrant?.(grant);
        await this.submitForWaiter(grant);
        const outcome = await this.options
          .signaller()
          .grant(grant)
          .catch(() => 'failed' as const);
        if (outcome === 'signalled') signalled.push(grant.holder);
        else if (outcome === 'gone') {
          const { grants: regranted, unadopted } = await this.store.release(grant.holder, this.caps, this.now());
          next.push(...regranted);
          if (unadopted) await this.cancelUnadopted(unadopted);
        }
      }
      await this.store.markSignalled(signalled);
      pending = next;
    }
  }

  /**
   * Submits the waiter's job with its own Idempotency-Key (the holder) as soon as its slot is granted,
   * instead of after the signal and its workflow task: the service's slot stands idle for one POST, not
   * one workflow task. The pipeline finds the job by its key (`ahead`) and adopts it without a POST.
   * Nothing is lost when this fails: the pipeline submits the kept body with the same key (a job this POST
   * created after all is the one it gets).
   */
  private async submitForWaiter(grant: SlotGrant): Promise<void> {
    const { service } = this.options;
    if (!grant.submit || !service) return;
    let request: GenerationRequest;
    try {
      const model = grant.submit.model as ModelId;
      // One try: a refusal (429, 402, 503) is the pipeline's to wait out or pause on, not this release's.
      request = await service.submit(model, grant.submit.input as ModelInputs[typeof model], {
        idempotencyKey: grant.holder,
        attempts: 1,
      });
    } catch (error) {
      this.options.onProblem?.('submit for a granted waiter left to its pipeline', {
        holder: grant.holder,
        reason: (error as Error).message,
      });
      return;
    }
    // Its waiter left between the grant and here (cancelled, its run reaped): nobody will take the job.
    if (!(await this.store.attachAhead(grant.holder, request))) await this.cancelUnadopted(request);
  }

  /** Cancels a job submitted for a waiter that will never take it (refunded; the client retries the cancel). */
  private async cancelUnadopted(request: GenerationRequest): Promise<void> {
    const { service } = this.options;
    const problem = (reason: string) =>
      this.options.onProblem?.('a job submitted for a waiter that left is not cancelled', {
        requestId: request.request_id,
        reason,
      });
    if (!service) return problem('no service client in this process');
    await cancelUnlessEnded(service, request).catch((error: unknown) => problem((error as Error).message));
  }

  /**
   * One reaper sweep: signals again grants not known to have arrived (older than `resignalAfterMs`),
   * frees slots held longer than `reapAfterMs` whose run is closed, and grants room left over (caps
   * raised since). A slot leaked by a closed run is freed within `reapAfterMs` plus one sweep period.
   */
  async sweep(): Promise<SweepResult> {
    const now = this.now();
    const result: SweepResult = { resignalled: 0, reaped: 0, granted: 0 };
    const older = now - Math.min(this.resignalAfterMs, this.reapAfterMs);
    for (const slot of await this.store.heldSince(older, SWEEP_LIMIT)) {
      if (slot.state === 1) {
        await this.hand([slot]);
        result.resignalled += 1;
        continue;
      }
      if (slot.grantedAt > now - this.reapAfterMs) continue;
      const running = await this.options
        .signaller()
        .running(slot.workflowId, slot.runId)
        .catch(() => true);
      if (running) continue;
      await this.release(slot.holder);
      result.reaped += 1;
    }
    const grants = await this.store.grantWaiting(this.caps, this.now());
    result.granted = grants.length;
    await this.hand(grants);
    return result;
  }

  /**
   * Sweeps every `everyMs` (default 10 s) until the returned stop is called; a failed sweep waits for
   * the next. `beforeSweep` runs first on each tick (the worker stops the reaper there once it ended).
   */
  startReaper(everyMs = 10_000, beforeSweep?: () => void): () => void {
    let running = false;
    const timer = setInterval(() => {
      beforeSweep?.();
      if (running || stopped) return;
      running = true;
      void this.sweep()
        .catch(() => undefined)
        .finally(() => {
          running = false;
        });
    }, everyMs);
    timer.unref();
    let stopped = false;
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }
}
