import type { ServiceRegistry } from '@warren/amqp';
import type { ReadinessProbe } from './probes';

/**
 * Unready until the registry's first announce-now round is over, so a
 * gateway that says ready already knows every live service: rpc.discover,
 * MCP tools/list and /services are complete, and the first calls are counted
 * under their method names. The round is bounded in time (about half a
 * second), so this never holds readiness for long.
 */
export function discoveryProbe(registry: Pick<ServiceRegistry, 'discoveryComplete'>): ReadinessProbe {
  return {
    name: 'discovery',
    required: true,
    check: async () => (registry.discoveryComplete ? { ok: true, state: 'complete' } : { ok: false, state: 'discovering' }),
  };
}
