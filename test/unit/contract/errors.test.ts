import { ReelflowError } from '../../../src/contract/errors';

class DiskFull extends ReelflowError {
  readonly code = 'disk_full';
}

describe('ReelflowError', () => {
  it('takes the subclass name as its name, keeps the message, the code and the cause', () => {
    const cause = new Error('ENOSPC');
    const error = new DiskFull('no space left for the journal', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('DiskFull');
    expect(error.message).toBe('no space left for the journal');
    expect(error.code).toBe('disk_full');
    expect(error.cause).toBe(cause);
  });
});
