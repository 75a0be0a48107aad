// What the calculator is, apart from where it connects: the options its main (RabbitMQ) and
// embedded mode (scripts/embedded.ts, in-memory) both pass to startService with their own
// connectTo. One definition, so both modes run the same service.
import type { CallTracker, ServiceEnv, ServiceOptions } from '@warren/amqp';
import type { Logger } from '@warren/logger';
import { calculatorMethods } from './methods';

export const calculatorDefaults = { name: 'calculator', prefetch: 32 } as const;

/** The calculator's startService options; `tracker` is optional (with one, redeliveries are answered from the stored result). */
export function calculatorService(config: Pick<ServiceEnv, 'namespace' | 'name' | 'prefetch' | 'instanceId'>, deps: { readonly logger: Logger; readonly tracker?: CallTracker }): ServiceOptions {
  return {
    namespace: config.namespace,
    name: config.name,
    prefetch: config.prefetch,
    methods: calculatorMethods,
    metadata: { description: 'Arithmetic methods and the calculate tool', version: '0.1.0' },
    logger: deps.logger,
    ...(deps.tracker === undefined ? {} : { tracker: deps.tracker }),
    ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  };
}
