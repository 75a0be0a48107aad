import type { JsonSchema } from '@warren/jsonrpc';
import type { ToolSpec } from './service-options';
import { trackingStates, type TrackingReport } from './tracker';

/** How a method describes itself for discovery (OpenRPC) and MCP tools. */
export interface MethodDescription {
  readonly name: string;
  readonly description?: string;
  readonly params?: JsonSchema;
  readonly result?: JsonSchema;
  readonly tool?: ToolSpec;
}

/**
 * What service instances publish on the control exchange: on start, every
 * `intervalMs` after (so a restarted broker rebuilds its registry within one
 * interval), and a `withdraw` on close.
 */
export type Announcement =
  | {
      readonly type: 'announce';
      readonly service: string;
      readonly instanceId: string;
      readonly startedAt: number;
      readonly intervalMs: number;
      readonly methods: readonly MethodDescription[];
      readonly notifications: readonly string[];
      readonly instanceNotifications: readonly string[];
      readonly metadata: Readonly<Record<string, string>>;
      readonly running: number;
      /** The instance's in-flight tracking, when it has a tracker that reports. */
      readonly tracking?: TrackingReport;
    }
  | { readonly type: 'withdraw'; readonly service: string; readonly instanceId: string };

/** Reads an announcement from untrusted bytes; undefined for anything malformed. */
export function parseAnnouncement(body: Buffer): Announcement | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v['service'] !== 'string' || typeof v['instanceId'] !== 'string') return undefined;
  if (v['type'] === 'withdraw') return { type: 'withdraw', service: v['service'], instanceId: v['instanceId'] };
  if (v['type'] !== 'announce' || !Array.isArray(v['methods']) || !Array.isArray(v['notifications'])) return undefined;
  // The report becomes metric labels and values: only a well-formed one is kept.
  const { tracking, ...rest } = v;
  const report = parseTrackingReport(tracking);
  return (report ? { ...rest, tracking: report } : rest) as Announcement;
}

function parseTrackingReport(value: unknown): TrackingReport | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const state = trackingStates.find((s) => s === r['state']);
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (state === undefined || !count(r['since']) || !count(r['degradedTransitions']) || !count(r['untracked'])) return undefined;
  return { state, since: r['since'], degradedTransitions: r['degradedTransitions'], untracked: r['untracked'] };
}
