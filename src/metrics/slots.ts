import { Counter, Gauge, type Registry } from 'prom-client';
import { defaultRegistry } from './definitions';

/** Where the slot gauges read the account's slots at scrape time (the route store's snapshot) and their caps. */
export interface SlotMetricsSource {
  /** The route store's SlotSnapshot (src/routing/slot-store.ts), as far as the gauges read it. */
  snapshot(): Promise<{
    heldByModel: Record<string, number>;
    heldByKey: Record<string, number>;
    waiting: { priority: number; fairnessKey: string; count: number }[];
  }>;
  /** The SlotCaps the worker counts against. */
  readonly caps: { account?: number; models: Readonly<Record<string, number>> };
}

type Snapshot = Awaited<ReturnType<SlotMetricsSource['snapshot']>>;

/** The scope label of the account-wide cap (models are labelled by their id). */
const ACCOUNT_SCOPE = 'account';

/**
 * How many fairness keys the slot gauges label by name; the rest are summed under `other`. A lone
 * pipeline's key is its workflow id, so a label per key would grow with every pipeline run.
 */
export const SLOT_KEY_LABELS = 10;
/** The `fairness_key` label of the keys past the top SLOT_KEY_LABELS. */
export const OTHER_KEYS = 'other';
/** The grant counter's `fairness_key` label of every lone pipeline (key `pipeline/<name>`). */
export const LONE_PIPELINES = 'pipeline/*';

/**
 * The `fairness_key` label of each key in `counts`: its own for the SLOT_KEY_LABELS keys with the most
 * (ties by name, so a scrape is stable), `other` for the rest.
 */
function keyLabels(counts: Map<string, number>): (key: string) => string {
  const top = new Set(
    [...counts.entries()]
      .sort(([a, m], [b, n]) => n - m || a.localeCompare(b))
      .slice(0, SLOT_KEY_LABELS)
      .map(([key]) => key),
  );
  return (key) => (top.has(key) ? key : OTHER_KEYS);
}

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

/** The gauges labelled by fairness key, capped at the SLOT_KEY_LABELS biggest keys plus `other`. */
function keyGauges(registry: Registry, read: () => Promise<Snapshot | undefined>): void {
  gauge(
    registry,
    'reelflow_slots_waiting',
    `Submissions waiting for one of the account’s slots, by priority (1 highest) and fairness key (the ${SLOT_KEY_LABELS} with most waiters, the rest as ${OTHER_KEYS}).`,
    ['priority', 'fairness_key'],
    async (g) => {
      const snapshot = await read();
      if (!snapshot) return;
      g.reset();
      const byKey = new Map<string, number>();
      for (const w of snapshot.waiting) byKey.set(w.fairnessKey, (byKey.get(w.fairnessKey) ?? 0) + w.count);
      const labelOf = keyLabels(byKey);
      // inc, not set: the keys past the top add up under one label.
      for (const w of snapshot.waiting)
        g.inc({ priority: String(w.priority), fairness_key: labelOf(w.fairnessKey) }, w.count);
    },
  );
  gauge(
    registry,
    'reelflow_slots_in_use_by_key',
    `The account's slots in use by fairness key (the ${SLOT_KEY_LABELS} holding most, the rest as ${OTHER_KEYS}).`,
    ['fairness_key'],
    async (g) => {
      const snapshot = await read();
      if (!snapshot) return;
      g.reset();
      const held = new Map(Object.entries(snapshot.heldByKey).filter(([, n]) => n > 0));
      const labelOf = keyLabels(held);
      for (const [key, n] of held) g.inc({ fairness_key: labelOf(key) }, n);
    },
  );
}

let source: SlotMetricsSource | undefined;

/**
 * The account's slots as Prometheus metrics (docs/observability.md): `reelflow_slots_in_use{scope}` and
 * `reelflow_slots_cap{scope}` (scope `account` or a model id), `reelflow_slots_waiting{priority,fairness_key}`
 * and `reelflow_slots_in_use_by_key{fairness_key}` (the SLOT_KEY_LABELS keys with most waiters or slots by
 * name, the rest as `other`), read from the route store when scraped (every worker on one store shows the same account), and
 * `reelflow_slot_grants_total{fairness_key}`, the grants this process made (lone pipelines summed as
 * LONE_PIPELINES). The last source wins when
 * several workers run in one process (they share the store).
 */
export function slotMetrics(
  from: SlotMetricsSource,
  registry: Registry = defaultRegistry,
): { granted(key: string): void } {
  source = from;
  // One store read per scrape: the registry collects every gauge at once, so they share the read in flight.
  let reading: Promise<Snapshot | undefined> | undefined;
  const read = () =>
    (reading ??= (source ? source.snapshot().catch(() => undefined) : Promise.resolve(undefined)).finally(() => {
      reading = undefined;
    }));
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
  keyGauges(registry, read);
  const existing = registry.getSingleMetric('reelflow_slot_grants_total');
  const grants =
    existing instanceof Counter
      ? existing
      : new Counter({
          name: 'reelflow_slot_grants_total',
          help: `Slots this process granted, by fairness key (a batch id or --fairness-key; lone pipelines as ${LONE_PIPELINES}).`,
          labelNames: ['fairness_key'],
          registers: [registry],
        });
  // A lone pipeline's key is its workflow id: one series per pipeline run would never end.
  return { granted: (key) => grants.inc({ fairness_key: key.startsWith('pipeline/') ? LONE_PIPELINES : key }) };
}
