import type { InstanceInfo } from '@warren/amqp';
import { ErrorCode } from '@warren/jsonrpc';
import { bearerChecker } from '../src/http/auth';
import { callTimeout } from '../src/http/rpc-route';
import { brokerOptionsFromEnv, resolveGatewayOptions } from '../src';
import { buildCatalogue, objectSchema } from '../src/catalogue';
import { contentDescriptors } from '../src/openrpc';
import { methodFilter } from '../src/options';
import { outcomeLabel } from '../src/metrics';
import { toolResult } from '../src/mcp/tool-result';

describe('toolResult', () => {
  it('wraps a string result as the design notes show', () => {
    expect(JSON.stringify(toolResult('calculate', { jsonrpc: '2.0', result: '10', id: 1 }))).toBe('{"content":[{"type":"text","text":"10"}],"structuredContent":{"result":"10"},"isError":false}');
  });

  it('renders other values as JSON text and keeps them under structuredContent.result', () => {
    expect(toolResult('t', { jsonrpc: '2.0', result: { a: [1, 2] }, id: 1 })).toEqual({ content: [{ type: 'text', text: '{"a":[1,2]}' }], structuredContent: { result: { a: [1, 2] } }, isError: false });
    expect(toolResult('t', { jsonrpc: '2.0', result: null, id: 1 })).toEqual({ content: [{ type: 'text', text: 'null' }], structuredContent: { result: null }, isError: false });
  });

  it('turns an error into isError with the tool name and message', () => {
    expect(toolResult('calculate', { jsonrpc: '2.0', error: { code: -32602, message: 'Division by zero at position 1' }, id: 1 })).toEqual({
      content: [{ type: 'text', text: 'Error executing tool calculate: Division by zero at position 1' }],
      isError: true,
    });
  });
});

describe('callTimeout', () => {
  it('uses the default without a header, caps at the maximum, refuses garbage', () => {
    expect(callTimeout(undefined, 30_000, 60_000)).toBe(30_000);
    expect(callTimeout('250', 30_000, 60_000)).toBe(250);
    expect(callTimeout('999999', 30_000, 60_000)).toBe(60_000);
    for (const bad of ['0', '-5', '1.5', 'soon', '', '1e3']) expect(callTimeout(bad, 30_000, 60_000)).toBeUndefined();
  });
});

describe('bearerChecker', () => {
  const check = bearerChecker(['alpha', 'beta']);
  it('accepts any configured token, case-insensitive scheme', () => {
    expect(check('Bearer alpha')).toBe(true);
    expect(check('bearer beta')).toBe(true);
  });
  it('refuses everything else', () => {
    for (const h of [undefined, '', 'Bearer', 'Bearer gamma', 'Basic alpha', 'Bearer alpha beta', 'alpha']) expect(check(h)).toBe(false);
  });
});

describe('options', () => {
  it('fills in documented defaults', () => {
    expect(resolveGatewayOptions()).toMatchObject({ host: '127.0.0.1', port: 18001, bodyLimitBytes: 1048576, defaultTimeoutMs: 30000, maxTimeoutMs: 60000, maxConcurrentCalls: 1000, tokens: [] });
  });
  it('names the bad field', () => {
    expect(() => resolveGatewayOptions({ maxConcurrentCalls: 0 })).toThrow(/maxConcurrentCalls/);
    expect(() => resolveGatewayOptions({ port: 70000 })).toThrow(/port/);
    expect(() => resolveGatewayOptions({ defaultTimeoutMs: 5000, maxTimeoutMs: 1000 })).toThrow(/defaultTimeoutMs/);
    expect(() => resolveGatewayOptions({ tokens: [''] })).toThrow(/tokens/);
  });
  it('matches the allow-list by exact name and prefix', () => {
    const allow = methodFilter(['add', 'calc.*']);
    expect(['add', 'calc.eval', 'calc.'].map(allow)).toEqual([true, true, true]);
    expect(['addition', 'calc', 'subtract'].map(allow)).toEqual([false, false, false]);
    expect(methodFilter(undefined)('anything')).toBe(true);
  });
  it('reads the environment, empty variables as unset', () => {
    const o = brokerOptionsFromEnv({ AMQP_URL: 'amqp://a, amqp://b', GATEWAY_PORT: '9000', GATEWAY_TOKENS: 't1, t2', GATEWAY_HOST: '', GATEWAY_ALLOW_METHODS: 'add' });
    expect(o).toMatchObject({ urls: ['amqp://a', 'amqp://b'], port: 9000, auth: 'token', tokens: [{ token: 't1' }, { token: 't2' }], allowMethods: ['add'], logLevel: 'info' });
    expect(o).not.toHaveProperty('host');
    expect(() => brokerOptionsFromEnv({ GATEWAY_AUTH: 'none', GATEWAY_PORT: 'eighty' })).toThrow(/GATEWAY_PORT/);
  });
});

describe('outcomeLabel', () => {
  it('names Warren codes and folds the rest', () => {
    expect(outcomeLabel(undefined)).toBe('ok');
    expect(outcomeLabel(ErrorCode.DeadlineExceeded)).toBe('deadline_exceeded');
    expect(outcomeLabel(ErrorCode.MethodNotFound)).toBe('method_not_found');
    expect(outcomeLabel(-32099)).toBe('application_error');
    expect(outcomeLabel(42)).toBe('application_error');
  });
});

describe('catalogue', () => {
  const instance = (service: string, startedAt: number, methods: InstanceInfo['methods']): InstanceInfo => ({
    v: 1, type: 'announce', durable: false, queueType: 'classic', service, instanceId: `${service}-${startedAt}`, startedAt, intervalMs: 10_000, methods, notifications: [], instanceNotifications: [], metadata: {}, running: 0, consuming: true, lastSeen: startedAt,
  });

  it('merges instances, newest description first, and lists tools', () => {
    const c = buildCatalogue([
      instance('calc', 1, [{ name: 'calculate', description: 'old' }]),
      instance('calc', 2, [{ name: 'calculate', description: 'new', params: { type: 'object', properties: { expression: { type: 'string' } } }, tool: { description: 'Evaluate', name: 'calc' } }]),
    ]);
    expect(c.methods.get('calculate')).toMatchObject({ description: 'new', service: 'calc' });
    expect(c.tools.get('calc')).toMatchObject({ method: 'calculate', inputSchema: { type: 'object', properties: { expression: { type: 'string' } } } });
    expect(c.services[0]?.instances).toHaveLength(2);
  });

  it('reports a method two services announce', () => {
    const c = buildCatalogue([instance('a', 1, [{ name: 'x' }]), instance('b', 1, [{ name: 'x' }])]);
    expect(c.conflicts).toEqual(['x']);
    expect(c.methods.get('x')?.service).toBe('a');
  });

  it('gives every tool an object input schema', () => {
    expect(objectSchema(undefined)).toEqual({ type: 'object' });
    expect(objectSchema({ type: 'array', items: { type: 'number' } })).toEqual({ type: 'object' });
    expect(objectSchema({ properties: { a: { type: 'string' } } })).toEqual({ properties: { a: { type: 'string' } }, type: 'object' });
  });
});

describe('contentDescriptors', () => {
  it('spells out by-name, tuple and fixed-length params', () => {
    expect(contentDescriptors({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a'] })).toEqual({
      paramStructure: 'by-name',
      params: [{ name: 'a', schema: { type: 'number' }, required: true }, { name: 'b', schema: { type: 'number' }, required: false }],
    });
    expect(contentDescriptors({ type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }).params).toHaveLength(2);
    expect(contentDescriptors({ type: 'array', prefixItems: [{ title: 'x' }, {}], minItems: 1 })).toEqual({
      paramStructure: 'by-position',
      params: [{ name: 'x', schema: { title: 'x' }, required: true }, { name: 'arg1', schema: {}, required: false }],
    });
  });
  it('leaves what it cannot name to x-warren-params-schema', () => {
    expect(contentDescriptors({ type: 'array', items: { type: 'number' } })).toEqual({ paramStructure: 'by-position', params: [] });
    expect(contentDescriptors({ oneOf: [{ type: 'array' }, { type: 'object' }] })).toEqual({ paramStructure: 'either', params: [] });
    expect(contentDescriptors(undefined)).toEqual({ paramStructure: 'either', params: [] });
  });
});
