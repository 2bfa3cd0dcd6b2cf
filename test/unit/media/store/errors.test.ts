import { MediaStoreError } from '../../../../src/media/store/errors';

describe('MediaStoreError', () => {
  it('carries the code it is given', () => {
    const error = new MediaStoreError('not_found', 'sha256:… is not in the store');
    expect(error).toMatchObject({
      code: 'not_found',
      name: 'MediaStoreError',
      message: 'sha256:… is not in the store',
    });
  });
});
