// The rpc.discover document, built from the example services' own
// announcements: valid OpenRPC (formats included), every schema in it usable
// by ajv in strict mode, and complete (params by name, results, errors,
// servers, notifications, job-style methods).
import jsonSchemaMetaSchema from '@json-schema-tools/meta-schema';
import metaSchema from '@open-rpc/meta-schema';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { type InstanceInfo } from '@warren/amqp';
import { resolveServiceOptions } from '../../libs/amqp/src/runtime/service-options';
import { describeInstance } from '../../libs/amqp/src/runtime/describe';
import { calculatorMethods } from '../../services/calculator/src/methods';
import { jobsMethods } from '../../services/jobs/src/methods';
import { buildCatalogue } from '../src/catalogue';
import { contentDescriptors, openRpcDocument } from '../src/openrpc';
import { servicesView } from '../src/services-view';
import { discoveryServers } from '../src/openrpc-servers';

const noStore = { get: async () => undefined, put: async () => undefined, append: async () => undefined } as unknown as Parameters<typeof jobsMethods>[0]['store'];

function instance(options: Parameters<typeof resolveServiceOptions>[0]): InstanceInfo {
  return { ...describeInstance(resolveServiceOptions(options), 1, 0), lastSeen: 1 };
}

const catalogue = buildCatalogue([
  instance({ name: 'calculator', methods: calculatorMethods }),
  instance({ name: 'jobs', queueType: 'quorum', methods: jobsMethods({ store: noStore, prefix: 'warren.jobs', status: async (callId) => ({ callId, state: 'unknown', cancelRequested: false }) }) }),
  instance({
    name: 'audit',
    notifications: { 'audit.record': { description: 'Records an event', params: { type: 'object', properties: { event: { type: 'string' } }, required: ['event'] }, handler: () => undefined } },
    instanceNotifications: { 'cache.flush': { handler: () => undefined } },
  }),
]);
const doc = openRpcDocument(catalogue, { servers: discoveryServers('http://127.0.0.1:18001', ['amqp://guest:secret@rabbit-1:5672/prod?heartbeat=10', 'amqps://rabbit-2'], 'warren') });

type Method = { name: string; paramStructure: string; params: { name: string; required: boolean; schema: unknown }[]; result: { schema: unknown }; errors: { code: number; message: string }[]; 'x-warren-job-style': boolean; 'x-warren-persistent': boolean; 'x-warren-params-schema'?: unknown };
const methods = doc['methods'] as unknown as Method[];
const method = (name: string): Method => methods.find((m) => m.name === name) as Method;

describe('the OpenRPC document', () => {
  it('passes the OpenRPC meta-schema, formats included', () => {
    // Both meta-schemas name a meta-schema URL ajv does not know, and are not clean under ajv's strict mode themselves.
    const withoutMeta = (s: unknown): Record<string, unknown> => {
      const { $schema: _meta, $id: _id, ...rest } = s as Record<string, unknown>;
      return rest;
    };
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    for (const key of ['https://meta.json-schema.tools', 'https://meta.json-schema.tools/']) ajv.addSchema(withoutMeta(jsonSchemaMetaSchema), key);
    const validate = ajv.compile(withoutMeta(metaSchema));
    expect(validate.errors ?? validate(doc) ? [] : validate.errors).toEqual([]);
  });

  it('holds only schemas ajv compiles in strict mode', () => {
    const ajv = new Ajv({ strict: true });
    const schemas = methods.flatMap((m) => [m.result.schema, ...m.params.map((p) => p.schema), ...(m['x-warren-params-schema'] === undefined ? [] : [m['x-warren-params-schema']])]);
    const notifications = doc['x-warren-notifications'] as { params: { schema: unknown }[]; 'x-warren-params-schema'?: unknown }[];
    schemas.push(...notifications.flatMap((n) => [...n.params.map((p) => p.schema), ...(n['x-warren-params-schema'] === undefined ? [] : [n['x-warren-params-schema']])]));
    expect(schemas.length).toBeGreaterThan(10);
    for (const s of schemas) expect(() => ajv.compile(s as object)).not.toThrow();
  });

  it('lists by-name params of a by-position-or-by-name method, in order, as "either"', () => {
    expect(method('add')).toMatchObject({ paramStructure: 'either', params: [{ name: 'a', required: true, schema: { type: 'number' } }, { name: 'b', required: true }] });
    expect(method('subtract')).toMatchObject({ paramStructure: 'either', params: [{ name: 'minuend' }, { name: 'subtrahend' }] });
    expect(method('calculate')).toMatchObject({ paramStructure: 'by-name', params: [{ name: 'expression', required: true }] });
    expect(method('report.progress')).toMatchObject({ paramStructure: 'either', params: [{ name: 'callId', required: true }] });
    expect(method('report.render')).toMatchObject({ paramStructure: 'by-name', params: [{ name: 'size', required: true }, { name: 'title', required: false }] });
  });

  it('gives every method its result schema and the errors it may answer', () => {
    expect(method('add').result.schema).toEqual({ type: 'number' });
    expect(method('add').errors.map((e) => e.code)).toEqual([-32602, -32001, -32002, -32003, -32004, -32603]);
    // A job-style method may also lose its worker; jobs run on a quorum (so durable) queue, so callers send them persistent.
    expect(method('report.render')).toMatchObject({ 'x-warren-job-style': true, 'x-warren-persistent': true });
    expect(method('report.render').errors.map((e) => e.code)).toContain(-32005);
    expect(method('report.progress')).toMatchObject({ 'x-warren-job-style': false, 'x-warren-persistent': false });
  });

  it("says which service is the broker (its announced metadata.role), so warren gen can leave its operator methods out", () => {
    const withBroker = openRpcDocument(buildCatalogue([instance({ name: 'calculator', methods: calculatorMethods }), instance({ name: 'ops', metadata: { role: 'broker' }, methods: { 'workers.pause': { handler: () => null } } })]));
    expect(withBroker['x-warren-services']).toEqual([expect.not.objectContaining({ role: expect.anything() as unknown }), expect.objectContaining({ name: 'ops', role: 'broker' })]);
  });

  it('names its servers without credentials', () => {
    expect(doc['servers']).toEqual([
      { name: 'gateway', url: 'http://127.0.0.1:18001/rpc', summary: expect.any(String) },
      { name: 'rabbitmq-1', url: 'amqp://rabbit-1:5672/prod', summary: expect.any(String), 'x-warren-namespace': 'warren', 'x-warren-exchange': 'warren.rpc' },
      { name: 'rabbitmq-2', url: 'amqps://rabbit-2/', summary: expect.any(String), 'x-warren-namespace': 'warren', 'x-warren-exchange': 'warren.rpc' },
    ]);
    expect(JSON.stringify(doc)).not.toContain('secret');
  });

  it('describes notifications with their params', () => {
    expect(doc['x-warren-notifications']).toEqual([
      { name: 'audit.record', service: 'audit', perInstance: false, description: 'Records an event', paramStructure: 'by-name', params: [{ name: 'event', required: true, schema: { type: 'string' } }], 'x-warren-params-schema': { type: 'object', properties: { event: { type: 'string' } }, required: ['event'] } },
      { name: 'cache.flush', service: 'audit', perInstance: true, paramStructure: 'either', params: [] },
    ]);
  });
});

describe('contentDescriptors', () => {
  it('reads a oneOf or anyOf of by-position and by-name as "either", named by the object', () => {
    const pair = { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 };
    const named = { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x'] };
    for (const key of ['oneOf', 'anyOf']) {
      expect(contentDescriptors({ [key]: [pair, named] })).toEqual({ paramStructure: 'either', params: [{ name: 'x', schema: { type: 'number' }, required: true }, { name: 'y', schema: { type: 'number' }, required: false }] });
    }
  });
});

describe('GET /services body', () => {
  const view = servicesView(catalogue);
  const service = (name: string) => view.services.find((s) => s.name === name);

  it('marks job-style methods, and persistent ones where the queue is durable', () => {
    expect(service('jobs')).toMatchObject({ durable: true, queueType: 'quorum' });
    expect(service('jobs')?.methods.find((m) => m.name === 'report.render')).toMatchObject({ jobStyle: true, persistent: true, params: { required: ['size'] } });
    expect(service('jobs')?.methods.find((m) => m.name === 'report.progress')).toMatchObject({ jobStyle: false, persistent: false });
    expect(service('calculator')?.methods.find((m) => m.name === 'calculate')).toMatchObject({ tool: 'calculate', jobStyle: false, result: { type: 'string' } });
  });

  it('keeps the notification name lists and adds their params schemas', () => {
    expect(service('audit')).toMatchObject({
      notifications: ['audit.record'],
      instanceNotifications: ['cache.flush'],
      notificationDetails: [
        { name: 'audit.record', perInstance: false, description: 'Records an event', params: { type: 'object', properties: { event: { type: 'string' } }, required: ['event'] } },
        { name: 'cache.flush', perInstance: true },
      ],
    });
  });
});
