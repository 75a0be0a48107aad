// The console's browser tests (console-suite.ts) against a real broker, RabbitMQ and Redis:
// calculator ×2 and one jobs worker, tracked in Redis, behind an operator token.
import { connectClient, startService } from '@warren/amqp';
import { MemoryEventLog } from '@warren/eventlog';
import { InflightView, createRedisTracker, inflightMethods, inflightNotifications, trackQueued } from '@warren/inflight';
import { amqpUrl, redisUrl, uniqueName } from '@warren/testkit';
import { startBroker } from '../../broker/src';
import { calculatorMethods } from '../../services/calculator/src/methods';
import { jobsMethods } from '../../services/jobs/src/methods';
import { TestNamespace, publishRaw } from '../support/amqp';
import { consoleSuite, patientHandler } from './console-suite';
import { deleteKeysUnder } from './redis-keys';

consoleSuite('rabbitmq', async (td) => {
  const token = 'console-test-token';
  const ns = new TestNamespace();
  const keyPrefix = uniqueName('console');
  const jobsName = ns.service('jobs');
  const calculatorName = ns.service('calculator');
  const brokerName = ns.service('warren-broker');
  const store = new MemoryEventLog();
  td.add(() => ns.destroy());
  td.add(() => deleteKeysUnder(keyPrefix));
  const view = new InflightView({ redis: redisUrl(), keyPrefix });
  td.add(() => view.close());
  const tracker = () => createRedisTracker({ redis: redisUrl(), keyPrefix, leaseMs: 3000, heartbeatMs: 500 });
  for (const instanceId of ['calculator-1', 'calculator-2']) {
    const s = await startService({ urls: amqpUrl(), namespace: ns.namespace, name: calculatorName, instanceId, methods: calculatorMethods, tracker: tracker() });
    td.add(() => s.close());
  }
  const jobs = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: jobsName, instanceId: 'jobs-1', prefetch: 1, tracker: tracker(),
    methods: jobsMethods({ store, prefix: `${ns.namespace}.${jobsName}`, stepMs: 300, status: (callId) => view.status(callId) }),
  });
  td.add(() => jobs.close());
  // A call waiting between attempts: its wait is long enough to look at it in the In flight view.
  const patientName = ns.service('patient');
  const patientWaitMs = 6000;
  ns.queue(ns.names.retryQueue(patientName, patientWaitMs));
  const patient = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: patientName, instanceId: 'patient-1', tracker: tracker(),
    methods: { 'patient.serve': { retry: { attempts: 2, backoffMs: patientWaitMs }, handler: patientHandler } },
  });
  td.add(() => patient.close());
  const broker = await startBroker({
    urls: amqpUrl(), namespace: ns.namespace, serviceName: brokerName, port: 0, tokens: [{ token, operator: true }], defaultMetrics: false,
    inflight: { list: () => view.list(), status: (callId) => view.status(callId) },
    serviceMethods: inflightMethods(view), serviceNotifications: inflightNotifications(view),
    console: { pollMs: 250 },
  });
  td.add(() => broker.close());
  trackQueued(broker.client, view);
  const url = await broker.listen();
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 60_000 });
  td.add(() => client.close());
  // The test's own AMQP caller marks its calls queued, as services and `warren call` do.
  trackQueued(client, view);
  return {
    mode: 'rabbitmq',
    url, token, client, calculatorName, jobsName, store,
    names: { ...ns.names, namespace: ns.namespace },
    publishRaw,
    services: () => broker.gateway.catalogue.current().services.length,
    patient: { method: 'patient.serve', waitMs: patientWaitMs },
  };
});
