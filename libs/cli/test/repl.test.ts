// The REPL's pure parts: reading a line (words, params), completion from a catalogue, the
// catalogue from an OpenRPC document and from announcements, the history file's place and bound.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { InstanceInfo } from '@warren/amqp';
import { fromAnnouncements, fromOpenRpc, paramNames, type Catalogue } from '../src/repl/catalogue';
import { complete } from '../src/repl/complete';
import { historyPath, loadHistory, saveHistory } from '../src/repl/history';
import { lineParams, words } from '../src/repl/line';

const openRpc = {
  openrpc: '1.3.2',
  methods: [
    { name: 'subtract', description: 'a − b', paramStructure: 'either', params: [{ name: 'minuend' }, { name: 'subtrahend' }], 'x-warren-service': 'calculator' },
    { name: 'sum', paramStructure: 'by-position', params: [{ name: 'arg0' }], 'x-warren-service': 'calculator' },
    { name: 'add', params: [], 'x-warren-params-schema': { oneOf: [{ type: 'array' }, { type: 'object', properties: { a: {}, b: {} } }] }, 'x-warren-service': 'calculator' },
    { name: 'report.render', params: [{ name: 'size' }, { name: 'title' }], 'x-warren-service': 'jobs' },
  ],
  'x-warren-services': [{ name: 'calculator' }, { name: 'jobs' }],
  'x-warren-notifications': [{ name: 'notify_hello', service: 'audit', params: [] }, { name: 'notify_hello', service: 'other' }, { name: 'logMessage', params: [{ name: 'text' }] }],
};
const catalogue: Catalogue = fromOpenRpc(openRpc);

describe('reading a line', () => {
  it('splits words as a shell does', () => {
    expect(words(`call greet name='Ada Lovelace' "x y" a\\ b`)).toEqual(['call', 'greet', 'name=Ada Lovelace', 'x y', 'a b']);
    expect(() => words(`call "open`)).toThrow(expect.objectContaining({ code: 'CLI_USAGE' }));
  });

  it('takes params as JSON, positional words, or name=value words', () => {
    expect(lineParams('')).toBeUndefined();
    expect(lineParams('{"minuend": 42, "subtrahend": 23}')).toEqual({ minuend: 42, subtrahend: 23 });
    expect(lineParams('[1, 2, 4]')).toEqual([1, 2, 4]);
    expect(lineParams('4 5 hello')).toEqual([4, 5, 'hello']);
    expect(lineParams('minuend=42 subtrahend=-3 note="a b"')).toEqual({ minuend: 42, subtrahend: -3, note: 'a b' });
    expect(lineParams('title=null tags=[1,2]')).toEqual({ title: null, tags: [1, 2] });
    expect(() => lineParams('a=1 2')).toThrow(expect.objectContaining({ code: 'CLI_USAGE' }));
    expect(() => lineParams('{"a": ')).toThrow(expect.objectContaining({ code: 'CLI_USAGE' }));
  });
});

describe('the catalogue', () => {
  it('reads methods, param names, services and notifications from rpc.discover', () => {
    expect(catalogue.source).toBe('rpc.discover');
    expect(catalogue.methods.map((m) => [m.name, m.params])).toEqual([['add', ['a', 'b']], ['report.render', ['size', 'title']], ['subtract', ['minuend', 'subtrahend']], ['sum', []]]);
    expect(catalogue.methods.find((m) => m.name === 'subtract')).toMatchObject({ description: 'a − b', service: 'calculator' });
    expect(catalogue.services).toEqual(['calculator', 'jobs']);
    expect(catalogue.notifications.map((n) => [n.name, n.params])).toEqual([['logMessage', ['text']], ['notify_hello', []]]);
    expect(fromOpenRpc('not a document').methods).toEqual([]);
  });

  it('reads them from announcements when no broker answers rpc.discover, the newest instance first', () => {
    const instance = (startedAt: number, methods: InstanceInfo['methods']): InstanceInfo => ({ service: 'calculator', startedAt, methods, notifications: [{ name: 'ping' }], instanceNotifications: [] }) as unknown as InstanceInfo;
    const c = fromAnnouncements([instance(1, [{ name: 'add' }]), instance(2, [{ name: 'add', params: { type: 'object', properties: { x: {} } } }])]);
    expect(c).toMatchObject({ source: 'announcements', services: ['calculator'], methods: [{ name: 'add', params: ['x'], service: 'calculator' }], notifications: [{ name: 'ping' }] });
  });

  it('names by-name params of object schemas and of every object branch of a union', () => {
    expect(paramNames({ anyOf: [{ type: 'array' }, { properties: { a: {}, b: {} } }, { properties: { b: {}, c: {} } }] })).toEqual(['a', 'b', 'c']);
    expect(paramNames({ type: 'array' })).toEqual([]);
    expect(paramNames(undefined)).toEqual([]);
  });
});

describe('completion', () => {
  it('offers commands and methods first, methods after call, notifications after notify', () => {
    expect(complete('', catalogue)[0]).toEqual(expect.arrayContaining(['call', 'notify', 'inflight', 'cancel', 'dlq', 'add', 'subtract']));
    expect(complete('su', catalogue)).toEqual([['subtract', 'sum'], 'su']);
    expect(complete('call re', catalogue)).toEqual([['report.render'], 're']);
    expect(complete('notify n', catalogue)).toEqual([['notify_hello'], 'n']);
  });

  it("offers a method's params as name=, leaving out those given", () => {
    expect(complete('call subtract ', catalogue)).toEqual([['minuend=', 'subtrahend='], '']);
    expect(complete('call subtract minuend=4 s', catalogue)).toEqual([['subtrahend='], 's']);
    expect(complete('subtract m', catalogue)).toEqual([['minuend='], 'm']);
    expect(complete('notify logMessage ', catalogue)).toEqual([['text='], '']);
    expect(complete('call subtract {"minuend": ', catalogue)).toEqual([[], '']);
    expect(complete('call nothing ', catalogue)).toEqual([[], '']);
  });

  it('offers services after inflight and dlq verbs', () => {
    expect(complete('dlq ', catalogue)).toEqual([['ls', 'purge', 'replay', 'show'], '']);
    expect(complete('dlq show j', catalogue)).toEqual([['jobs'], 'j']);
    expect(complete('inflight c', catalogue)).toEqual([['calculator'], 'c']);
  });
});

describe('the history file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'warren-history-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lives in WARREN_REPL_HISTORY, else the XDG state directory, else ~/.local/state', () => {
    expect(historyPath({ WARREN_REPL_HISTORY: '/x/h' }, '/home/u')).toBe('/x/h');
    expect(historyPath({ WARREN_REPL_HISTORY: 'off' }, '/home/u')).toBeUndefined();
    expect(historyPath({ WARREN_REPL_HISTORY: '' }, '/home/u')).toBeUndefined();
    expect(historyPath({ XDG_STATE_HOME: '/state' }, '/home/u')).toBe('/state/warren/repl_history');
    expect(historyPath({}, '/home/u')).toBe('/home/u/.local/state/warren/repl_history');
  });

  it('keeps the newest lines within its bound, oldest first in the file', () => {
    const file = path.join(dir, 'a', 'b', 'history');
    expect(loadHistory(file)).toEqual([]);
    saveHistory(file, ['c', 'b', 'a'], 2);
    expect(readFileSync(file, 'utf8')).toBe('b\nc\n');
    writeFileSync(file, '1\n2\n3\n4\n');
    expect(loadHistory(file, 3)).toEqual(['4', '3', '2']);
  });
});
