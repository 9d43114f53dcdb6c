import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { SchedulePreview } from './SchedulePreview';

describe('SchedulePreview', () => {
  it('draws the first attempt and each retry with its wait and when it happens', () => {
    render(<SchedulePreview retry_enabled retry_value={30} max_retries={3} backoff_type="multiplier" backoff_value={2} />);
    const items = within(screen.getByRole('region', { name: 'Retry schedule preview' }))
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    expect(items).toEqual([
      'First attemptat 0 s',
      'Retry 1 after 30 sat 30 s',
      'Retry 2 after 1 minat 1 min 30 s',
      'Retry 3 after 2 minat 3 min 30 s',
    ]);
    expect(screen.getByText('3 retries over 3 min 30 s at most.')).toBeTruthy();
  });

  it('says there is one attempt when retries are off', () => {
    render(<SchedulePreview retry_enabled={false} retry_value={30} max_retries={3} backoff_type="fixed" backoff_value={0} />);
    expect(screen.getByText('One attempt, no retries.')).toBeTruthy();
  });

  it('asks for valid fields instead of drawing a schedule the API would refuse', () => {
    render(<SchedulePreview retry_enabled retry_value={30} max_retries={99} backoff_type="fixed" backoff_value={0} />);
    expect(screen.getByText('Fix the retry fields to see the schedule.')).toBeTruthy();
    expect(screen.queryAllByRole('listitem')).toEqual([]);
  });
});
