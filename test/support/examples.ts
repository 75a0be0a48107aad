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
    expect(canonicalResponse((await res.json()) as JsonValue)).toBe(canonicalResponse(example.response));
  }
}
