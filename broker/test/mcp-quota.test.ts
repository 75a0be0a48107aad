// The MCP session quota decision (issue 28, item 5): tokens are counted apart from the address they
// share; a token at its quota reclaims its own least recently used idle session.
import { decideQuota, type QuotaSession } from '../src/mcp/quota';

const limits = { maxSessions: 10, maxSessionsPerToken: 3, maxSessionsPerIp: 3 };
const ip = '10.0.0.1';
const session = (owner: number | undefined, lastUsed: number, open = 0, from = ip): QuotaSession => ({ owner, ip: from, open, lastUsed });

describe('decideQuota', () => {
  it('a token at its quota does not lock another token on the same address out', () => {
    const live = [session(0, 1), session(0, 2), session(0, 3, 1)];
    expect(decideQuota(live, { token: 1, ip }, limits)).toEqual({ kind: 'admit' });
  });

  it('a token over its quota reclaims its least recently used idle session, never another token\'s', () => {
    const oldestOfOther = session(1, 0);
    const busyOldest = session(0, 1, 1);
    const idleOlder = session(0, 2);
    const live = [oldestOfOther, busyOldest, session(0, 5), idleOlder];
    expect(decideQuota(live, { token: 0, ip }, limits)).toEqual({ kind: 'reclaim', victim: idleOlder });
  });

  it('a token whose sessions all have a request open (or are SSE streams) gets 429 scope token', () => {
    const live = [session(0, 1, 1), session(0, 2, 1), session(0, 3, 2)];
    expect(decideQuota(live, { token: 0, ip }, limits)).toEqual({ kind: 'refuse', code: 'WARREN_GW_SESSION_QUOTA', data: { scope: 'token', limit: 3 } });
  });

  it('authenticated sessions never count against the address quota', () => {
    const live = [session(0, 1), session(0, 2), session(1, 3), session(2, 4)];
    expect(decideQuota(live, { token: 3, ip }, limits)).toEqual({ kind: 'admit' });
    expect(decideQuota(live, { token: undefined, ip }, limits)).toEqual({ kind: 'admit' });
  });

  it('unauthenticated use is counted by address, without reclaiming', () => {
    const live = [session(undefined, 1), session(undefined, 2), session(undefined, 3)];
    expect(decideQuota(live, { token: undefined, ip }, limits)).toEqual({ kind: 'refuse', code: 'WARREN_GW_SESSION_QUOTA', data: { scope: 'ip', limit: 3 } });
    expect(decideQuota(live, { token: undefined, ip: '10.0.0.2' }, limits)).toEqual({ kind: 'admit' });
  });

  it('the global limit refuses a new session, but not a reclaim that keeps the total', () => {
    const full = Array.from({ length: 10 }, (_, i) => session(i % 4 === 0 ? 0 : 9, i));
    expect(decideQuota(full, { token: 5, ip }, limits)).toEqual({ kind: 'refuse', code: 'WARREN_GW_TOO_MANY_SESSIONS' });
    expect(decideQuota(full, { token: 0, ip }, limits)).toMatchObject({ kind: 'reclaim' });
    expect(decideQuota(full, { token: undefined, ip: '10.9.9.9' }, limits)).toEqual({ kind: 'refuse', code: 'WARREN_GW_TOO_MANY_SESSIONS' });
  });
});
