import type { ProbeResult, ReadinessProbe } from './probes';
import { sharedRead } from './shared-read';

/**
 * A probe whose check is shared: requests that arrive while a check runs
 * wait for that one, and its answer is reused for `maxAgeMs` after it
 * settles. 200 load balancers polling /readyz at once cost one Redis PING,
 * not 200 connections; a dependency that goes away shows within `maxAgeMs`
 * plus the check's own timeout. A check that throws counts as a failed one
 * (and is kept like one).
 *
 * @example
 * const probe = sharedProbe(redisPingProbe(url)); // at most one PING a second
 */
export function sharedProbe(probe: ReadinessProbe, maxAgeMs = 1000, now: () => number = () => performance.now()): ReadinessProbe {
  const check = sharedRead((): Promise<ProbeResult> => probe.check().catch((): ProbeResult => ({ ok: false, state: 'error' })), maxAgeMs, now);
  return {
    name: probe.name,
    ...(probe.required === undefined ? {} : { required: probe.required }),
    check,
  };
}
