import {
  localPerSecondPrice,
  MODELS,
  tablePrice,
  type ModelId,
  type ModelInput,
  type PricingUnit,
} from '../../contract';
import { MediaError, type ModelRunner } from '../media/runner';
import { ServiceProblem } from '../http/errors';

export interface Price {
  credits: number;
  pricingUnit: PricingUnit;
  /** Probed clip seconds for the per-second models; null for a model priced by the table. */
  billedSeconds: number | null;
}

/**
 * The one calculator behind both the quote endpoint and the charge on submit: the model's price
 * table (long-form), or the local per-second rate times the probed length of the input clip. With `keepIn`
 * (a submit), the clip stays there and the render uses those same bytes: a server cannot have a
 * short clip priced and a long one rendered.
 */
export async function priceOf(runner: ModelRunner, model: ModelId, input: ModelInput, keepIn?: string): Promise<Price> {
  const byTable = tablePrice(model, input);
  if (byTable !== undefined) return { credits: byTable, pricingUnit: 'per-request', billedSeconds: null };
  let seconds: number;
  try {
    seconds = await runner.billedSeconds(model, input, keepIn);
  } catch (error) {
    throw mediaProblem(error);
  }
  const credits = localPerSecondPrice(model, input as { processing_speed?: unknown }, seconds);
  if (credits === undefined) throw new ServiceProblem('internal_error', `no per-second rate for ${model}`);
  return {
    credits,
    pricingUnit: MODELS[model].pricingUnit,
    billedSeconds: seconds,
  };
}

/** Maps a media failure while reading inputs to a 422 problem naming the field. */
export function mediaProblem(error: unknown): ServiceProblem {
  if (error instanceof MediaError) {
    const path = error.path ?? '(root)';
    if (error.code === 'input_too_long') {
      return new ServiceProblem('validation_failed', error.message, { errors: [{ path, message: error.message }] });
    }
    return new ServiceProblem('input_fetch_failed', error.message, { errors: [{ path, message: error.message }] });
  }
  return new ServiceProblem('internal_error', 'could not price the input');
}
