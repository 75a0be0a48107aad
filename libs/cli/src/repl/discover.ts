// Loads the REPL's catalogue from the live system: `rpc.discover` (the broker answers it over
// RabbitMQ and through the gateway), else, over RabbitMQ with no broker running, the services'
// own announcements (the registry's announce-now round). Never throws: a system that answers
// neither leaves completion to commands alone, and the REPL says so.
import { ServiceRegistry } from '@warren/amqp';
import type { Session } from '../session';
import { emptyCatalogue, fromAnnouncements, fromOpenRpc, type Catalogue } from './catalogue';

/** How long `rpc.discover` may take before the announcements are asked instead. @default 5000 */
export const discoverTimeoutMs = 5000;

/** The catalogue, and why it is empty when it is (for the banner). */
export async function loadCatalogue(s: Session): Promise<{ readonly catalogue: Catalogue; readonly problem?: string }> {
  let problem: string;
  try {
    const client = await s.client();
    const doc = await client.call('rpc.discover', undefined, { timeoutMs: Math.min(discoverTimeoutMs, s.settings.connectTimeoutMs) });
    return { catalogue: fromOpenRpc(doc) };
  } catch (err) {
    problem = `rpc.discover: ${err instanceof Error ? err.message : String(err)}`;
  }
  const connection = s.connection;
  if (connection === undefined) return { catalogue: emptyCatalogue, problem };
  try {
    const registry = await ServiceRegistry.start(connection, { namespace: s.settings.namespace });
    try {
      await registry.discovered();
      return { catalogue: fromAnnouncements(registry.list()) };
    } finally {
      await registry.close();
    }
  } catch (err) {
    return { catalogue: emptyCatalogue, problem: `${problem}; announcements: ${err instanceof Error ? err.message : String(err)}` };
  }
}
