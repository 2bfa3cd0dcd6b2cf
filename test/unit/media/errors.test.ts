import { ArchiveError, FfmpegError, MediaResolutionError } from '../../../src/media/errors';

describe('media errors', () => {
  it('FfmpegError names the tool, the exit code and the last three lines of stderr', () => {
    const error = new FfmpegError('ffmpeg', 1, 'line 1\nline 2\nline 3\nInvalid data found\n');
    expect(error.message).toBe('ffmpeg exited with 1: line 2 | line 3 | Invalid data found');
    expect(error).toMatchObject({ code: 'ffmpeg_failed', exitCode: 1 });
    expect(error.stderr).toContain('line 1');
  });

  it('FfmpegError says a signal ended the tool, and nothing more when it printed nothing', () => {
    expect(new FfmpegError('ffprobe', null, '  ').message).toBe('ffprobe exited with a signal');
  });

  it('ArchiveError and MediaResolutionError carry their failure types and retry hints', () => {
    expect(new ArchiveError('HTTP 503', true)).toMatchObject({
      code: 'archive_failed',
      type: 'ArchiveFailed',
      retryable: true,
    });
    expect(new MediaResolutionError('gone', 'image_urls.3', true)).toMatchObject({
      code: 'media_unavailable',
      type: 'MediaUnavailable',
      field: 'image_urls.3',
      permanent: true,
      retryable: false,
    });
  });
});
