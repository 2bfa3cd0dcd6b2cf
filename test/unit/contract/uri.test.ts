import { makeUriSchema, uriProblem } from '../../../src/contract/uri';

describe('uriProblem', () => {
  it('accepts a public https URL and a base64 data URI', () => {
    expect(uriProblem('https://media.example.com/a.png')).toBeNull();
    expect(uriProblem('data:image/png;base64,iVBORw0KGgo=')).toBeNull();
  });

  it.each([
    ['http://media.example.com/a.png', 'must use https (or be a base64 data URI)'],
    ['ftp://media.example.com/a.png', 'must use https (or be a base64 data URI)'],
    ['https://user:pw@media.example.com/a.png', 'must not carry credentials'],
    ['not a url', 'must be an https URL or a base64 data URI'],
    ['data:image/png,plain', 'must be a base64 data URI (data:<type>;base64,<data>)'],
  ])('refuses %s: %s', (value, reason) => {
    expect(uriProblem(value)).toBe(reason);
  });

  it('accepts any URL under an allowed origin, trailing slash or not, and nothing beside it', () => {
    expect(uriProblem('http://127.0.0.1:8787/files/a.mp4', { allowedOrigins: ['http://127.0.0.1:8787/'] })).toBeNull();
    expect(uriProblem('http://127.0.0.1:8788/files/a.mp4', { allowedOrigins: ['http://127.0.0.1:8787'] })).toBe(
      'must use https (or be a base64 data URI)',
    );
  });

  it('accepts plain http of local hosts only when asked, and never of public hosts', () => {
    const rules = { allowPlainHttp: true };
    expect(uriProblem('http://127.0.0.1:9000/bucket/a.mp4', rules)).toBeNull();
    expect(uriProblem('http://192.168.1.20/a.mp4', rules)).toBeNull();
    expect(uriProblem('http://172.32.0.1/a.mp4', rules)).toBe('must use https (or be a base64 data URI)');
    expect(uriProblem('http://media.example.com/a.mp4', rules)).toBe('must use https (or be a base64 data URI)');
    expect(uriProblem('http://127.0.0.1:9000/bucket/a.mp4')).toBe('must use https (or be a base64 data URI)');
  });
});

describe('makeUriSchema', () => {
  it('reports the reason as the issue message', () => {
    const parsed = makeUriSchema().safeParse('http://media.example.com/a.png');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe('must use https (or be a base64 data URI)');
  });
});
