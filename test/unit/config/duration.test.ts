import { parseDurationSeconds } from '../../../src/config/duration';

describe('parseDurationSeconds', () => {
  it.each([
    ['90', 90],
    ['90s', 90],
    ['15m', 900],
    ['2H', 7200],
    ['30d', 2_592_000],
    [' 5 m ', 300],
  ])('%p is %i s', (text, seconds) => {
    expect(parseDurationSeconds(text)).toBe(seconds);
  });

  it.each(['', '1.5h', '-5s', '5w', 'm', '5 minutes'])('%p is no duration', (text) => {
    expect(parseDurationSeconds(text)).toBeNull();
  });
});
