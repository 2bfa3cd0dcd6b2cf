import { z } from 'zod';

const PORT_RULE = 'must be a port number 0-65535 (0 picks a free one)';

/** The one port rule of every process, for flags and variables: an integer 0-65535, 0 picking a free one. */
export const portTextSchema = z
  .string()
  .trim()
  .regex(/^\d{1,5}$/, PORT_RULE)
  .transform(Number)
  .pipe(z.number().max(65_535, PORT_RULE));

/** A TCP port as the processes take it, from a flag or a variable: an integer 0-65535, 0 picking a free one. */
export function parsePort(text: string): number {
  const parsed = portTextSchema.safeParse(text);
  if (!parsed.success) throw new RangeError(`${PORT_RULE}, got "${text}"`);
  return parsed.data;
}
