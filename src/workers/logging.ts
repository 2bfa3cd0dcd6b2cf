import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import pino, { type Logger } from 'pino';

const PINO_LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK's logger, writing one pino JSON line per entry. Workflow and activity logs carry
 * the SDK's context (workflowId, runId, workflowType, activityType, taskQueue…) as fields, and
 * reelflow's activities add `requestId`, so an operator can grep by either.
 */
export function createSdkLogger(
  level: LogLevel = 'INFO',
  destination: Logger = pino({ base: { service: 'reelflow-worker' } }),
): DefaultLogger {
  destination.level = PINO_LEVELS[level];
  return new DefaultLogger(level, (entry: LogEntry) => {
    const { meta, message } = entry;
    destination[PINO_LEVELS[entry.level]]({ ...meta, sdkTime: Number(entry.timestampNanos / 1_000_000n) }, message);
  });
}

/**
 * Maps REELFLOW_LOG_LEVEL (pino names, case-insensitive; validated by src/config) to the SDK's level;
 * default INFO. The SDK has nothing above ERROR, so `fatal` and `silent` log errors only.
 */
export function sdkLogLevel(value: string | undefined): LogLevel {
  const wanted = (value ?? 'info').toUpperCase();
  if (wanted === 'FATAL' || wanted === 'SILENT') return 'ERROR';
  if (wanted in PINO_LEVELS) return wanted as LogLevel;
  throw new Error(`REELFLOW_LOG_LEVEL: must be one of trace, debug, info, warn, error`);
}
