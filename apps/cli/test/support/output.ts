/**
 * Reads the cli's human output back the way a person's eye does: a table by the columns its
 * header line sets (so a misaligned row reads wrong), `key: value` lines by the column the
 * values start at.
 */
export function readTable(stdout: string): { header: string[]; rows: Record<string, string>[] } {
  const lines = stdout.replace(/\n$/, '').split('\n');
  const headings = [...lines[0].matchAll(/\S+(?: \S+)*/g)].map((match) => ({ name: match[0], start: match.index ?? 0 }));
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    headings.forEach((heading, i) => {
      const end = i + 1 < headings.length ? headings[i + 1].start : undefined;
      // The cell starts exactly under its heading, and the gap before the next column is blank.
      if (i > 0 && line[heading.start - 1] !== undefined && line[heading.start - 1] !== ' ')
        throw new Error(`column ${heading.name} is misaligned in:\n${stdout}`);
      row[heading.name] = line.slice(heading.start, end).trim();
    });
    return row;
  });
  return { header: headings.map((heading) => heading.name), rows };
}

/** `key: value` lines, the values aligned; stops at the first blank line (a table may follow). */
export function readItem(stdout: string): Record<string, string> {
  const lines = stdout.split('\n\n')[0].replace(/\n$/, '').split('\n');
  const starts = new Set<number>();
  const item: Record<string, string> = {};
  for (const line of lines) {
    const match = /^([^:\s]+):( +)(.*)$/.exec(line);
    if (!match) throw new Error(`not a "key: value" line: ${JSON.stringify(line)}`);
    starts.add(match[1].length + 1 + match[2].length);
    item[match[1]] = match[3];
  }
  if (starts.size !== 1) throw new Error(`values are not aligned:\n${stdout}`);
  return item;
}
