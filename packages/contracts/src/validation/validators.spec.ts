import { describeHeaderProblems, isReservedHeaderName } from './webhook-headers';
import { describeUrlProblem } from './webhook-url';

describe('describeUrlProblem', () => {
  it.each(['https://example.com', 'http://example.com:8080/a/b?c=d#e', 'https://127.0.0.1/h', 'http://[::1]:9/'])('accepts %s', (url) => {
    expect(describeUrlProblem(url)).toBeNull();
  });

  it.each([
    [undefined, /string/],
    ['', /empty/],
    ['https://example.com/' + 'a'.repeat(2048), /2048/],
    ['ftp://example.com', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['example.com/hooks', /absolute/],
    ['https://u:p@example.com', /credentials/],
    ['https://example.com\n', /white space/],
  ])('refuses %p', (url, message) => {
    expect(describeUrlProblem(url)).toMatch(message);
  });
});

describe('describeHeaderProblems', () => {
  it('accepts ordinary custom headers', () => {
    expect(describeHeaderProblems({ 'X-Api-Key': 'k', Authorization: 'Bearer t', 'User-Agent': 'custom' })).toEqual([]);
  });

  it('names each offending header in its own detail', () => {
    expect(describeHeaderProblems({ Host: 'x', 'Bad Name': 'v', 'X-Ok': 'a\nb' })).toEqual([
      { field: 'headers.Host', message: '"Host" is reserved and cannot be set' },
      { field: 'headers.Bad Name', message: 'header name may only contain HTTP token characters' },
      {
        field: 'headers.X-Ok',
        message: 'header values must not contain CR, LF, NUL or other control characters, or characters beyond Latin-1',
      },
    ]);
  });

  it.each(['host', 'Content-Length', 'proxy-connection', 'Webhook-Timestamp', 'TE'])('treats %s as reserved', (name) => {
    expect(isReservedHeaderName(name)).toBe(true);
  });

  it.each(['X-Webhook-Id', 'Authorization', 'Accept'])('does not reserve %s', (name) => {
    expect(isReservedHeaderName(name)).toBe(false);
  });
});
