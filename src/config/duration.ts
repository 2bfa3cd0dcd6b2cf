/** Unit lengths in seconds of the durations people write: `90s`, `15m`, `1h`, `30d`. */
const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Seconds in a duration written as a whole number with an optional unit (s, m, h, d; none = s),
 * or null when the text is not one.
 */
export function parseDurationSeconds(text: string): number | null {
  const match = /^\s*(\d+)\s*([smhd]?)\s*$/i.exec(text);
  if (!match) return null;
  return Number(match[1]) * (UNITS[(match[2] || 's').toLowerCase()] ?? 1);
}
