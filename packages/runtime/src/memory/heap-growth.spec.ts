import { heapGrowthChosen } from './heap-growth';

describe('heapGrowthChosen', () => {
  it('sees the flag on the command line, in either spelling', () => {
    expect(heapGrowthChosen(['--heap-growing-percent=50'])).toBe(true);
    expect(heapGrowthChosen(['--max-old-space-size=512', '--heap_growing_percent=30'])).toBe(true);
    expect(heapGrowthChosen(['--heap-growing-percent'])).toBe(true);
  });

  it('does not mistake other flags for it', () => {
    expect(heapGrowthChosen(['--max-old-space-size=512', '--heap-growing-percentage=5', '--optimize-for-size'])).toBe(false);
    expect(heapGrowthChosen([])).toBe(false);
  });
});
