// The console's browser tests (console-suite.ts) against the embedded system: the broker and the
// example services in this one process over the in-memory broker and stores, as `npm start` runs
// them without RabbitMQ or Redis (scripts/embedded.ts), with calculator ×2 and one jobs worker.
import { connectClient, names, startService } from '@warren/amqp';
import { createMemoryTracker, memoryInflightView, trackQueued } from '@warren/inflight';
import { silentLogger } from '@warren/logger';
import { startEmbedded } from '../../scripts/embedded';
import { consoleSuite, patientHandler } from './console-suite';

consoleSuite('embedded', async (td) => {
  const token = 'console-test-token';
  const namespace = 'warren';
  const system = await startEmbedded(
    { GATEWAY_OPERATOR_TOKENS: token, GATEWAY_PORT: '0', JOBS_STEP_MS: '300', JOBS_LEASE_MS: '3000' },
    () => silentLogger(),
    {
      instances: [{ name: 'calculator-1', service: 'calculator' }, { name: 'calculator-2', service: 'calculator' }, { name: 'jobs-1', service: 'jobs' }],
      broker: { defaultMetrics: false, console: { pollMs: 250 } },
    },
  );
  td.add(() => system.close());
  // A call waiting between attempts, in an in-memory delay queue, tracked in the system's in-memory store.
  const patientWaitMs = 6000;
  const patient = await startService({
    connection: system.bus.connect(), namespace, name: 'patient', instanceId: 'patient-1', tracker: createMemoryTracker(system.inflight, { keyPrefix: namespace }),
    methods: { 'patient.serve': { retry: { attempts: 2, backoffMs: patientWaitMs }, handler: patientHandler } },
  });
  td.add(() => patient.close());
  const client = await connectClient({ connection: system.bus.connect(), namespace, defaultTimeoutMs: 60_000 });
  td.add(() => client.close());
  // The test's own caller marks its calls queued, as services and `warren call` do.
  const view = memoryInflightView(system.inflight, { keyPrefix: namespace });
  td.add(() => view.close());
  trackQueued(client, view);
  return {
    mode: 'embedded',
    url: system.url, token, client, calculatorName: 'calculator', jobsName: 'jobs', store: system.events,
    names: { ...names(namespace), namespace },
    publishRaw: async (exchange, routingKey, body, props) => {
      const connection = system.bus.connect();
      try {
        const model = connection.model;
        if (!model) throw new Error('the in-memory connection is not open');
        const ch = await model.createConfirmChannel();
        ch.publish(exchange, routingKey, body, props);
        await ch.waitForConfirms();
        await ch.close();
      } finally {
        await connection.close();
      }
    },
    services: () => system.broker.gateway.catalogue.current().services.length,
    patient: { method: 'patient.serve', waitMs: patientWaitMs },
  };
});
