import type { ProbeResult, ReadinessProbe } from './probes';

/**
 * A probe whose check is shared: requests that arrive while a check runs
 * wait for that one, and its answer is reused for `maxAgeMs` after it
 * settles. 200 load balancers polling /readyz at once cost one Redis PING,
 * not 200 connections; a dependency that goes away shows within `maxAgeMs`
 * plus the check's own timeout.
 *
 * @example
 * const probe = sharedProbe(redisPingProbe(url)); // at most one PING a second
 */
export function sharedProbe(probe: ReadinessProbe, maxAgeMs = 1000, now: () => number = () => performance.now()): ReadinessProbe {
  let running: Promise<ProbeResult> | undefined;
  let last: { result: ProbeResult; at: number } | undefined;
  return {
    name: probe.name,
    ...(probe.required === undefined ? {} : { required: probe.required }),
    check() {
      if (last && now() - last.at < maxAgeMs) return Promise.resolve(last.result);
      running ??= probe.check().then(
        (result) => result,
        (): ProbeResult => ({ ok: false, state: 'error' }),
      ).then((result) => {
        last = { result, at: now() };
        running = undefined;
        return result;
      });
      return running;
    },
  };
}
