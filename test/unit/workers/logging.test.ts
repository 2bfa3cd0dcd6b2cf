import { Writable } from 'node:stream';
import pino from 'pino';
import { createSdkLogger, sdkLogLevel } from '../../../src/workers/logging';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino(stream) };
}

describe('worker logs', () => {
  it('writes one JSON line per SDK entry, with the workflow and request ids as fields', () => {
    const { lines, logger } = capture();
    const sdk = createSdkLogger('INFO', logger);
    sdk.info('job submitted', { workflowId: 'demo/job/generate', activityType: 'submitJob', requestId: 'req-1' });
    sdk.debug('not at this level', { workflowId: 'x' });
    sdk.warn('slow', { workflowId: 'demo/job/generate' });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'job submitted',
      workflowId: 'demo/job/generate',
      requestId: 'req-1',
      activityType: 'submitJob',
    });
    expect(lines[1]).toMatchObject({ level: 40, msg: 'slow' });
  });

  it('reads REELFLOW_LOG_LEVEL with pino names and names the variable when it is wrong', () => {
    expect(sdkLogLevel(undefined)).toBe('INFO');
    expect(sdkLogLevel('debug')).toBe('DEBUG');
    expect(sdkLogLevel('fatal')).toBe('ERROR');
    expect(() => sdkLogLevel('loud')).toThrow('REELFLOW_LOG_LEVEL');
  });
});
