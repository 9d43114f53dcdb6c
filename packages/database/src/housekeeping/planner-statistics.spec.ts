import { GrowthMarks } from './planner-statistics';

describe('GrowthMarks', () => {
  it('passes a mark at 1,000 rows added, then at each doubling up to 64,000, and never again', () => {
    const marks = new GrowthMarks();
    const passedAt: number[] = [];
    for (let rows = 1; rows <= 200_000; rows++) if (marks.added(1)) passedAt.push(rows);
    expect(passedAt).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]);
  });

  it('counts marks a large batch passes at once as one', () => {
    const marks = new GrowthMarks();
    expect(marks.added(999)).toBe(false);
    expect(marks.added(5_000)).toBe(true);
    expect(marks.added(1_000)).toBe(false);
    expect(marks.added(2_001)).toBe(true);
  });
});
