import { describe, expect, it } from 'vitest';
import { statusText, statusTooltip } from '../src/status';

describe('status bar', () => {
  it('shows the run state and the pending count', () => {
    expect(statusText('idle', 0)).toBe('$(sparkle) Toolgate: idle');
    expect(statusText('running', 2)).toBe('$(sync~spin) Toolgate: running · 2 pending');
    expect(statusText('error', 0)).toBe('$(error) Toolgate: error');
  });

  it('explains itself in the tooltip', () => {
    expect(statusTooltip('running', 1)).toBe('The agent is working. 1 proposal waits for review. Click to see pending proposals.');
    expect(statusTooltip('idle', 3)).toContain('3 proposals wait');
  });
});
