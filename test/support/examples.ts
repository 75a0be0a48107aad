import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { JsonValue } from '@warren/jsonrpc';

export interface Example {
  readonly name: string;
  readonly request: string;
  readonly response?: JsonValue;
  readonly response_shape?: string;
  readonly mcp?: boolean;
}

const repoRoot = path.resolve(__dirname, '..', '..');

/**
 * Loads an example file from the team's shared/ folder beside the repository,
 * which is the source of truth; falls back to the copy in test/fixtures so a
 * clone on its own still runs.
 */
export function loadExamples(file: 'spec-examples.json' | 'seed-examples.json'): Example[] {
  const candidates = [
    process.env['WARREN_SHARED_DIR'] && path.join(process.env['WARREN_SHARED_DIR'], 'jsonrpc', file),
    path.join(repoRoot, '..', 'shared', 'jsonrpc', file),
    path.join(repoRoot, 'test', 'fixtures', 'jsonrpc', file),
  ].filter((p): p is string => typeof p === 'string' && p.length > 0);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`example file ${file} not found in ${candidates.join(', ')}`);
  return (JSON.parse(readFileSync(found, 'utf8')) as { examples: Example[] }).examples;
}

/** Canonical text of a response (or batch as a sorted multiset), so batches compare in any order. */
export function canonicalResponse(value: JsonValue | undefined | null): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return JSON.stringify(value.map((v) => canonical(v)).sort());
  return canonical(value);
}

function canonical(value: JsonValue): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, JsonValue>)[k] as JsonValue)]));
  }
  return value;
}

/**
 * Posts one example to a gateway's POST /rpc and checks the answer: 204 and no body for a
 * notification-only request, else 200, JSON, and the example's response (batches in any order).
 * The one runner for the examples over HTTP, whatever system serves them.
 */
export async function expectExampleOverHttp(url: string, example: Example, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: example.request });
  if (example.response === null) {
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  } else {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(canonicalResponse(asExampleShows((await res.json()) as JsonValue, example.response))).toBe(canonicalResponse(example.response));
  }
}

type ErrorResponse = { error: { code: number; message: string; data?: JsonValue }; id: JsonValue };

function isErrorResponse(value: JsonValue | undefined): value is JsonValue & ErrorResponse {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof value['error'] === 'object' && value['error'] !== null;
}

/**
 * `actual` with what JSON-RPC 2.0 leaves to the server (§5.1) read as the example writes it, and nothing
 * else: an error's `data` is dropped where the example's error (same id) has none, and its message is
 * the example's where it starts with it (Warren's -32601 goes on to say where it looked: "Method not
 * found: \"foobar\" is served by nobody in namespace …", with `data.namespace`, `data.suggestions`).
 * Codes, ids, results and every other member still compare exactly.
 */
export function asExampleShows(actual: JsonValue, example: JsonValue | undefined): JsonValue {
  const examples = Array.isArray(example) ? example : [example];
  const one = (response: JsonValue): JsonValue => {
    if (!isErrorResponse(response)) return response;
    const expected = examples.find((e) => isErrorResponse(e) && JSON.stringify(e.id) === JSON.stringify(response.id));
    if (!isErrorResponse(expected)) return response;
    const { data, ...error } = response.error;
    const kept = expected.error.data === undefined ? error : { ...error, ...(data === undefined ? {} : { data }) };
    const message = error.message.startsWith(expected.error.message) ? expected.error.message : error.message;
    return { ...(response as ErrorResponse), error: { ...kept, message } } as unknown as JsonValue;
  };
  return Array.isArray(actual) ? actual.map(one) : one(actual);
}
