import { Counter, Gauge, type Registry } from 'prom-client';
import { defaultRegistry } from './definitions';

/** Where the slot gauges read the account's slots at scrape time (the route store's snapshot) and their caps. */
export interface SlotMetricsSource {
  /** The route store's SlotSnapshot (src/routing/slot-store.ts), as far as the gauges read it. */
  snapshot(): Promise<{ heldByModel: Record<string, number>; waiting: { priority: number; count: number }[] }>;
  /** The SlotCaps the worker counts against. */
  readonly caps: { account?: number; models: Readonly<Record<string, number>> };
}

/** The scope label of the account-wide cap (models are labelled by their id). */
const ACCOUNT_SCOPE = 'account';

function gauge(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  collect: (g: Gauge) => Promise<void>,
) {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      await collect(this);
    },
  });
}

let source: SlotMetricsSource | undefined;

/**
 * The account's slots as Prometheus metrics (docs/observability.md): `reelflow_slots_in_use{scope}` and
 * `reelflow_slots_cap{scope}` (scope `account` or a model id), `reelflow_slots_waiting{priority}`, read
 * from the route store when scraped (every worker on one store shows the same account), and
 * `reelflow_slot_grants_total{fairness_key}`, the grants this process made. The last source wins when
 * several workers run in one process (they share the store).
 */
export function slotMetrics(
  from: SlotMetricsSource,
  registry: Registry = defaultRegistry,
): { granted(key: string): void } {
  source = from;
  const read = async () => (source ? source.snapshot().catch(() => undefined) : undefined);
  gauge(
    registry,
    'reelflow_slots_in_use',
    "The account's slots in use (granted or held), by scope: account or model.",
    ['scope'],
    async (g) => {
      const snapshot = await read();
      if (!snapshot) return;
      g.reset();
      const models = Object.entries(snapshot.heldByModel);
      g.set(
        { scope: ACCOUNT_SCOPE },
        models.reduce((sum, [, n]) => sum + n, 0),
      );
      for (const [model, n] of models) g.set({ scope: model }, n);
    },
  );
  gauge(
    registry,
    'reelflow_slots_cap',
    "The account's caps on jobs in flight, by scope: account or model.",
    ['scope'],
    async (g) => {
      g.reset();
      const caps = source?.caps;
      if (caps?.account !== undefined) g.set({ scope: ACCOUNT_SCOPE }, caps.account);
      for (const [model, cap] of Object.entries(caps?.models ?? {})) g.set({ scope: model }, cap);
    },
  );
  gauge(
    registry,
    'reelflow_slots_waiting',
    'Submissions waiting for one of the account’s slots, by priority (1 highest).',
    ['priority'],
    async (g) => {
      const snapshot = await read();
      if (!snapshot) return;
      g.reset();
      const byPriority = new Map<number, number>();
      for (const w of snapshot.waiting) byPriority.set(w.priority, (byPriority.get(w.priority) ?? 0) + w.count);
      for (const [priority, n] of byPriority) g.set({ priority: String(priority) }, n);
    },
  );
  const existing = registry.getSingleMetric('reelflow_slot_grants_total');
  const grants =
    existing instanceof Counter
      ? existing
      : new Counter({
          name: 'reelflow_slot_grants_total',
          help: 'Slots this process granted, by fairness key (a batch id, a lone pipeline, or --fairness-key).',
          labelNames: ['fairness_key'],
          registers: [registry],
        });
  return { granted: (key) => grants.inc({ fairness_key: key }) };
}
