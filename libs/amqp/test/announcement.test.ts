import { parseAnnouncement } from '../src/announcement';

const announce = (extra: Record<string, unknown> = {}): Buffer =>
  Buffer.from(JSON.stringify({
    type: 'announce', service: 'svc', instanceId: 'i1', startedAt: 1, intervalMs: 10_000, methods: [], notifications: [], instanceNotifications: [], metadata: {}, running: 0, ...extra,
  }));

describe('parseAnnouncement', () => {
  it('keeps a well-formed tracking report', () => {
    const tracking = { state: 'degraded', since: 1_700_000_000_000, degradedTransitions: 2, untracked: 40 };
    expect(parseAnnouncement(announce({ tracking }))).toMatchObject({ type: 'announce', service: 'svc', tracking });
  });

  it('drops a tracking report that does not fit, keeping the rest of the announcement', () => {
    for (const tracking of [
      { state: 'hacked"} 1\nevil', since: 1, degradedTransitions: 0, untracked: 0 },
      { state: 'tracking', since: -1, degradedTransitions: 0, untracked: 0 },
      { state: 'tracking', since: 1, degradedTransitions: 0.5, untracked: 0 },
      { state: 'tracking', since: 1, degradedTransitions: 0, untracked: '3' },
      { state: 'tracking' },
      'tracking',
      null,
    ]) {
      const parsed = parseAnnouncement(announce({ tracking }));
      expect(parsed).toMatchObject({ type: 'announce', service: 'svc' });
      expect(parsed && 'tracking' in parsed).toBe(false);
    }
  });

  it('reads an announcement without a tracker as before, and refuses what is not one', () => {
    expect(parseAnnouncement(announce())).not.toHaveProperty('tracking');
    expect(parseAnnouncement(Buffer.from('not json'))).toBeUndefined();
    expect(parseAnnouncement(Buffer.from('{"type":"announce","service":"s"}'))).toBeUndefined();
    expect(parseAnnouncement(Buffer.from('{"type":"withdraw","service":"s","instanceId":"i"}'))).toEqual({ type: 'withdraw', service: 's', instanceId: 'i' });
  });
});
