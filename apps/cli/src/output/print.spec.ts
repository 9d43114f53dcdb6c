import { column, printItem, printList } from './print';

/** What a print call wrote to stdout and stderr. */
function capture(print: () => void): { stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    print();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return { stdout, stderr };
}

describe('printList', () => {
  const columns = [column('ID'), column('NEXT ATTEMPT', 'next_attempt_at'), column('NAME')];
  const data = [
    { id: 'dlv_1', next_attempt_at: null, name: 'short' },
    { id: 'dlv_22', next_attempt_at: '2026-11-23T10:00:00.000Z', name: '' },
  ];

  it('aligns columns two spaces apart, with - for null and empty, and no trailing spaces', () => {
    expect(capture(() => printList({ data, next_cursor: null }, columns, { json: false, noun: 'deliveries' }))).toEqual({
      stdout: [
        'ID      NEXT ATTEMPT              NAME',
        'dlv_1   -                         short',
        'dlv_22  2026-11-23T10:00:00.000Z  -',
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('says where the next page is on stderr, and an empty list in words', () => {
    expect(
      capture(() => printList({ data: data.slice(0, 1), next_cursor: 'dlv_1' }, columns, { json: false, noun: 'deliveries' })).stderr,
    ).toBe('herald: more deliveries on the next page: --cursor dlv_1\n');
    expect(capture(() => printList({ data: [], next_cursor: null }, columns, { json: false, noun: 'deliveries' }))).toEqual({
      stdout: '',
      stderr: 'herald: no deliveries\n',
    });
  });

  it('with --json writes {data, next_cursor} and nothing to stderr', () => {
    const printed = capture(() => printList({ data, next_cursor: 'dlv_22' }, columns, { json: true, noun: 'deliveries' }));
    expect(JSON.parse(printed.stdout)).toEqual({ data, next_cursor: 'dlv_22' });
    expect(printed.stderr).toBe('');
  });
});

describe('printItem', () => {
  it('writes aligned key: value lines, nested objects as dotted keys, and named lists as tables', () => {
    const data = {
      id: 'dlv_1',
      retry_config: { retry_value: 30, backoff_type: 'fixed' },
      headers: {},
      tags: ['a', 'b'],
      attempts: [{ number: 1, error: 'timeout' }],
    };
    expect(capture(() => printItem({ data }, { json: false, tables: { attempts: [column('#', 'number'), column('ERROR')] } })).stdout).toBe(
      [
        'id:                        dlv_1',
        'retry_config.retry_value:  30',
        'retry_config.backoff_type: fixed',
        'headers:                   -',
        'tags:                      a, b',
        '',
        'attempts:',
        '#  ERROR',
        '1  timeout',
        '',
      ].join('\n'),
    );
  });

  it("escapes control characters, so a value cannot move the terminal's cursor or colour it", () => {
    const printed = capture(() => printItem({ data: { name: 'evil\u001b[2J\r\nname\u0085' } }, { json: false })).stdout;
    expect(printed).toBe('name: evil\\u001b[2J\\u000d\\u000aname\\u0085\n');
  });

  it("with --json writes the api's data as it came", () => {
    const data = { id: 42, name: 'line\nbreak', account_id: null };
    expect(JSON.parse(capture(() => printItem({ data }, { json: true })).stdout)).toEqual(data);
  });
});
