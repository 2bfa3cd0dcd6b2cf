import {
  booleanTextSchema,
  clientCancelMethodSchema,
  earlyCheckSecondsSchema,
  logLevelSchema,
  serviceUrlSchema,
  temporalAddressSchema,
  webhookSecretsSchema,
  wholeNumberText,
} from '../../../src/config/schemas';

const messageOf = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.error?.issues[0]?.message;

describe('variable text schemas', () => {
  it('temporalAddressSchema takes host:port only', () => {
    expect(temporalAddressSchema.parse(' temporal:7233 ')).toBe('temporal:7233');
    expect(messageOf(temporalAddressSchema.safeParse('http://temporal:7233'))).toBe(
      'must be host:port, e.g. localhost:7233',
    );
  });

  it('webhookSecretsSchema splits on commas and refuses an empty secret', () => {
    expect(webhookSecretsSchema.parse('whsec_a, whsec_b')).toEqual(['whsec_a', 'whsec_b']);
    expect(messageOf(webhookSecretsSchema.safeParse('whsec_a,,whsec_b'))).toBe('must not contain an empty secret');
  });

  it('serviceUrlSchema takes http(s) and drops the trailing slash', () => {
    expect(serviceUrlSchema.parse('http://127.0.0.1:8710//')).toBe('http://127.0.0.1:8710');
    expect(serviceUrlSchema.safeParse('ftp://x').success).toBe(false);
  });

  it('clientCancelMethodSchema is case-insensitive', () => {
    expect(clientCancelMethodSchema.parse('delete')).toBe('DELETE');
    expect(messageOf(clientCancelMethodSchema.safeParse('PATCH'))).toBe('must be POST, PUT or DELETE');
  });

  it('earlyCheckSecondsSchema takes 0 to 600 seconds', () => {
    expect(earlyCheckSecondsSchema.parse('2.5')).toBe(2.5);
    expect(earlyCheckSecondsSchema.parse('0')).toBe(0);
    expect(messageOf(earlyCheckSecondsSchema.safeParse('601'))).toBe('must be at most 600 seconds');
    expect(earlyCheckSecondsSchema.safeParse('-1').success).toBe(false);
  });

  it('wholeNumberText bounds a decimal whole number', () => {
    const schema = wholeNumberText(1, 10);
    expect(schema.parse('10')).toBe(10);
    expect(messageOf(schema.safeParse('0'))).toBe('must be at least 1');
    expect(messageOf(schema.safeParse('11'))).toBe('must be at most 10');
    expect(messageOf(schema.safeParse('1e3'))).toBe('must be a whole number');
  });

  it.each([
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['0', false],
    ['No', false],
  ])('booleanTextSchema reads %p as %p', (text, value) => {
    expect(booleanTextSchema.parse(text)).toBe(value);
  });

  it('booleanTextSchema refuses anything else', () => {
    expect(messageOf(booleanTextSchema.safeParse('on'))).toBe('must be true or false');
  });

  it('logLevelSchema takes pino levels in any case', () => {
    expect(logLevelSchema.parse('DEBUG')).toBe('debug');
    expect(logLevelSchema.safeParse('verbose').success).toBe(false);
  });
});
