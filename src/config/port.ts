/** A TCP port as the processes take it, from a flag or a variable: an integer 0-65535, 0 picking a free one. */
export function parsePort(text: string): number {
  const trimmed = text.trim();
  if (!/^\d{1,5}$/.test(trimmed) || Number(trimmed) > 65535) throw new RangeError(`must be a port number 0-65535 (0 picks a free one), got "${text}"`);
  return Number(trimmed);
}
