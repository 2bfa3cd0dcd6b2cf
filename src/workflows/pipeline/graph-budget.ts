import { FAILURE_TYPES } from '../../contract/failure-types';
import { resolveItemReferences } from '../../pipeline-spec/items';
import { mapReferences, referencePlaceholder } from '../../pipeline-spec/references';
import type { PipelineStep } from '../../pipeline-spec/spec';
import type { PipelineState } from '../pipeline-state';
import type { PipelineWorkflowInput } from '../pipeline-types';
import type { StepProgress } from '../steps/kind';
import { kindOf } from '../steps/registry';

/**
 * A graph's budget: before its first submit, every paid node and item it can still start is quoted
 * and the sum checked against what the budget has left (the graph is refused with the figures when
 * it would pass it); then each submit is checked against the remainder less the quotes of the work
 * not yet submitted elsewhere in the graph. Without a budget nothing is quoted here.
 */
export class GraphBudget {
  /** Quote of each unit of work (a step, or `<step>/<item>`) not yet submitted, credits. */
  private readonly reserved = new Map<string, number>();

  constructor(
    private readonly input: PipelineWorkflowInput,
    private readonly state: PipelineState,
  ) {}

  /** Quotes every unit the graph can still start and refuses the graph when their sum passes the budget. */
  async checkAll(): Promise<void> {
    const remaining = this.state.budgetRemaining();
    if (remaining === undefined) return;
    const quoted = await Promise.all(this.input.spec.steps.map((step) => this.quoteStep(step)));
    const parts: string[] = [];
    let total = 0;
    quoted.forEach((units, index) => {
      const credits = units.map(([, c]) => c);
      const sum = credits.reduce((a, b) => a + b, 0);
      if (units.length === 0 || sum === 0) return;
      total += sum;
      const step = this.input.spec.steps[index] as PipelineStep;
      const same = credits.every((c) => c === credits[0]);
      parts.push(step.each && same ? `${step.id} ${units.length} × ${credits[0]}` : `${step.id} ${sum}`);
      for (const [unit, c] of units) this.reserved.set(unit, c);
    });
    if (total <= remaining) return;
    const { name, budgetCredits } = this.state.summary();
    const spent = (budgetCredits ?? 0) - remaining;
    this.state.fail(
      FAILURE_TYPES.budgetExceeded,
      `pipeline ${name}: the graph's jobs still to start would cost ${total} credits (${parts.join(', ')}), ` +
        `over the remaining budget of ${remaining} (budget ${budgetCredits}, ${spent} spent); nothing was submitted`,
    );
  }

  /** What unit `unit` may spend before its submit: the budget's remainder less the other units' quotes. */
  remainingFor(unit: string): () => number | undefined {
    return () => {
      const remaining = this.state.budgetRemaining();
      if (remaining === undefined) return undefined;
      let others = 0;
      for (const [other, credits] of this.reserved) if (other !== unit) others += credits;
      return remaining - others;
    };
  }

  /** Wraps a unit's observer: once its work was handed over (a job: submitted, so charged), its quote is spent. */
  observing(unit: string, observe: (progress: StepProgress) => void): (progress: StepProgress) => void {
    return (progress) => {
      if (progress.submitted()) this.reserved.delete(unit);
      observe(progress);
    };
  }

  /** The unit ended (or never submitted): its quote is no longer held for it. */
  started(unit: string): void {
    this.reserved.delete(unit);
  }

  /** The units of `step` still to run, each with its quote (none for a carried step, a carried item or a free kind). */
  private async quoteStep(step: PipelineStep): Promise<[string, number][]> {
    const kind = kindOf(step);
    const carried = this.input.resume?.steps[step.id];
    if (!kind.quote || (carried && !step.each)) return [];
    const literal = mapReferences(step.input, referencePlaceholder) as Record<string, unknown>;
    if (!step.each) return [[step.id, await kind.quote(step, literal)]];
    // Items with the same input cost the same: one quote each distinct input.
    const quotes = new Map<string, Promise<number>>();
    const units = step.each.flatMap((item, i) => {
      if (carried?.items?.[i]) return [];
      const input = resolveItemReferences(literal, item);
      const key = JSON.stringify(input);
      if (!quotes.has(key)) quotes.set(key, (kind.quote as NonNullable<typeof kind.quote>)(step, input));
      return [[`${step.id}/${i}`, quotes.get(key) as Promise<number>] as const];
    });
    return Promise.all(units.map(async ([unit, credits]): Promise<[string, number]> => [unit, await credits]));
  }
}
