// Talking to the broker: the bearer token (kept for the tab in sessionStorage),
// JSON GETs, and JSON-RPC calls through POST /rpc.

const tokenKey = 'warren.console.token';

export function token(): string | undefined {
  return sessionStorage.getItem(tokenKey) ?? undefined;
}

export function setToken(value: string | undefined): void {
  if (value === undefined || value === '') sessionStorage.removeItem(tokenKey);
  else sessionStorage.setItem(tokenKey, value);
}

export function authHeaders(): Record<string, string> {
  const t = token();
  return t === undefined ? {} : { authorization: `Bearer ${t}` };
}

/**
 * Why the broker refused the page: no token given yet (`missing`), a token it does not accept
 * (`invalid`, 401), or a valid client token where the console needs an operator's (`not-operator`,
 * 403 `operator_token_required` from the feed).
 */
export type AuthProblem = 'missing' | 'invalid' | 'not-operator';

/** The broker refused the token: the page asks for one, saying why. */
export class UnauthorizedError extends Error {
  constructor(readonly problem: AuthProblem) {
    super(`unauthorized: ${problem}`);
  }
}

type Listener = (problem: AuthProblem) => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever any request is refused for its token. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function reportUnauthorized(problem: AuthProblem): void {
  for (const l of unauthorizedListeners) l(problem);
}

/** What a 401 means: no token given yet, or a wrong one. */
export function refusedToken(): AuthProblem {
  return token() === undefined ? 'missing' : 'invalid';
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, { headers: { accept: 'application/json', ...authHeaders() }, ...(signal ? { signal } : {}) });
  if (response.status === 401) {
    const problem = refusedToken();
    reportUnauthorized(problem);
    throw new UnauthorizedError(problem);
  }
  if (!response.ok && response.status !== 503) throw new Error(`${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** A JSON-RPC answer with its round-trip time. */
export type RpcAnswer =
  | { readonly ok: true; readonly result: unknown; readonly ms: number }
  | { readonly ok: false; readonly error: RpcError; readonly ms: number };

let nextId = 1;

/** Calls a method through POST /rpc; never rejects for a JSON-RPC error (only for a network failure). */
export async function rpc(method: string, params?: unknown, timeoutMs?: number): Promise<RpcAnswer> {
  const body = JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), id: `console-${nextId++}` });
  const started = performance.now();
  const response = await fetch('/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders(), ...(timeoutMs === undefined ? {} : { 'x-timeout-ms': String(timeoutMs) }) },
    body,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status === 401) reportUnauthorized(refusedToken());
  let answer: { result?: unknown; error?: RpcError } | undefined;
  try {
    answer = JSON.parse(text) as { result?: unknown; error?: RpcError };
  } catch {
    return { ok: false, error: { code: -32700, message: `unreadable answer (HTTP ${response.status})` }, ms };
  }
  if (answer.error) return { ok: false, error: answer.error, ms };
  return { ok: true, result: answer.result, ms };
}

/**
 * Calls several methods in one POST /rpc (a JSON-RPC batch: each entry is authorized and answered
 * on its own); the answers in the order of `calls`. Never rejects for a JSON-RPC error.
 */
export async function rpcBatch(calls: readonly { readonly method: string; readonly params?: unknown }[]): Promise<RpcAnswer[]> {
  const ids = calls.map(() => `console-${nextId++}`);
  const body = JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', method: c.method, ...(c.params === undefined ? {} : { params: c.params }), id: ids[i] })));
  const started = performance.now();
  const response = await fetch('/rpc', { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status === 401) reportUnauthorized(refusedToken());
  let answers: unknown;
  try {
    answers = JSON.parse(text);
  } catch {
    answers = undefined;
  }
  const byId = new Map<unknown, { result?: unknown; error?: RpcError }>();
  if (Array.isArray(answers)) for (const a of answers as { id?: unknown; result?: unknown; error?: RpcError }[]) byId.set(a.id, a);
  // A batch refused whole (too large, bad token) answers one error: it is every entry's.
  const whole = !Array.isArray(answers) ? (answers as { error?: RpcError } | undefined)?.error ?? { code: -32700, message: `unreadable answer (HTTP ${response.status})` } : undefined;
  return ids.map((id): RpcAnswer => {
    const a = byId.get(id);
    if (a?.error ?? whole) return { ok: false, error: (a?.error ?? whole) as RpcError, ms };
    if (a === undefined) return { ok: false, error: { code: -32603, message: 'no answer in the batch' }, ms };
    return { ok: true, result: a.result, ms };
  });
}

/** Like {@link rpc}, but a JSON-RPC error rejects (for the views' own calls). */
export async function call<T>(method: string, params?: unknown): Promise<T> {
  const answer = await rpc(method, params);
  if (!answer.ok) throw new RpcCallError(method, answer.error);
  return answer.result as T;
}

export class RpcCallError extends Error {
  constructor(readonly method: string, readonly error: RpcError) {
    super(`${method}: ${error.message} (${error.code})`);
  }
}
