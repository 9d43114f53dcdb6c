import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { HeaderEditor, rowsFromMap, rowsToMap, type HeaderRow } from './HeaderEditor';

function Harness({ initial, error, seen }: { initial: HeaderRow[]; error?: string; seen: HeaderRow[][] }) {
  const [rows, setRows] = useState(initial);
  return (
    <HeaderEditor
      rows={rows}
      error={error}
      onChange={(next) => {
        seen.push(next);
        setRows(next);
      }}
    />
  );
}

describe('rowsToMap / rowsFromMap', () => {
  it('round-trips a map, names like __proto__ and constructor included', () => {
    const map = JSON.parse('{"X-Token":"a","__proto__":"b","constructor":"c"}') as Record<string, string>;
    const back = rowsToMap(rowsFromMap(map)).map;
    expect(Object.keys(back)).toEqual(['X-Token', '__proto__', 'constructor']);
    expect(JSON.stringify(back)).toBe(JSON.stringify(map));
  });

  it('skips empty rows and reports a name given twice, whatever its case', () => {
    const { map, duplicates } = rowsToMap([
      { name: 'X-A', value: '1' },
      { name: '', value: '' },
      { name: 'x-a', value: '2' },
    ]);
    expect(map).toEqual({ 'X-A': '1', 'x-a': '2' });
    expect(duplicates).toEqual(['x-a']);
  });
});

describe('HeaderEditor', () => {
  it('adds, edits and removes rows by keyboard-reachable controls', async () => {
    const user = userEvent.setup();
    const seen: HeaderRow[][] = [];
    render(<Harness initial={[{ name: 'X-Keep', value: 'yes' }]} seen={seen} />);
    await user.click(screen.getByRole('button', { name: 'Add header' }));
    await user.type(screen.getByRole('textbox', { name: 'Header 2 name' }), 'X-Api-Token');
    await user.type(screen.getByRole('textbox', { name: 'Header 2 value' }), 's3cret');
    expect(rowsToMap(seen.at(-1)!).map).toEqual({ 'X-Keep': 'yes', 'X-Api-Token': 's3cret' });
    await user.click(screen.getByRole('button', { name: 'Remove header 1' }));
    expect(seen.at(-1)).toEqual([{ name: 'X-Api-Token', value: 's3cret' }]);
    expect(screen.queryByDisplayValue('X-Keep')).toBeNull();
  });

  it("shows the API's error for the header map, else a duplicate it sees itself", () => {
    const { rerender } = render(
      <HeaderEditor
        rows={[
          { name: 'X-A', value: '1' },
          { name: 'X-a', value: '2' },
        ]}
        onChange={() => undefined}
      />,
    );
    expect(screen.getByRole('alert').textContent).toBe('Header given twice: X-a');
    rerender(<HeaderEditor rows={[{ name: 'Host', value: 'x' }]} onChange={() => undefined} error="headers.Host is reserved" />);
    expect(screen.getByRole('alert').textContent).toBe('headers.Host is reserved');
  });
});
