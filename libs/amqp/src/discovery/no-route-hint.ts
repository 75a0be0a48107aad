import { distance } from 'fastest-levenshtein';
import { RpcNoRouteError } from '@warren/jsonrpc';
import type { ServiceRegistry } from './registry';

/** At most this many suggestions: a list longer than that is no hint. */
const maxSuggestions = 3;

/**
 * The methods of `known` a caller who typed `method` may have meant, nearest first (then by name):
 * those within 2 edits (1 for names of 3 characters or fewer, where 2 edits reach almost anything),
 * and those with the same last dotted segment under another prefix (`add` for `math.add`, `billing.charge`
 * for `bill.charge`). Pure, and only ever run for a call that already failed, so its cost (one
 * distance per known method) is never paid by a call that succeeds.
 *
 * @example nearMethods('sbutract', ['add', 'subtract', 'multiply']) // ['subtract']
 */
export function nearMethods(method: string, known: Iterable<string>): string[] {
  const limit = method.length <= 3 ? 1 : 2;
  const tail = lastSegment(method);
  const scored: { readonly name: string; readonly score: number }[] = [];
  for (const name of new Set(known)) {
    if (name === method) continue;
    // Only names whose lengths allow it are measured: a long directory costs a length compare each.
    const d = Math.abs(name.length - method.length) <= limit ? distance(method, name) : Number.POSITIVE_INFINITY;
    if (d <= limit) scored.push({ name, score: d });
    else if (lastSegment(name) === tail) scored.push({ name, score: limit + 1 });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, maxSuggestions).map((s) => s.name);
}

function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/** Every method the registry's announcements name (live instances'), for {@link noRouteHint}. */
export function announcedMethods(registry: Pick<ServiceRegistry, 'list'>): string[] {
  return registry.list().flatMap((instance) => instance.methods.map((m) => m.name));
}

/**
 * What a request RabbitMQ returned unrouted fails with when the caller knows the namespace's methods:
 * RPC_NO_ROUTE naming the namespace it was looked for in and the near methods (-32601 with
 * `data.namespace` and `data.suggestions`, docs/errors.md). `suggestions` is `[]` when nothing is near.
 *
 * @example noRouteHint('ad', 'warren', ['add', 'subtract']) // RpcNoRouteError: "ad" is served by nobody in namespace "warren"; did you mean "add"?
 */
export function noRouteHint(method: string, namespace: string, known: Iterable<string>): RpcNoRouteError {
  return new RpcNoRouteError(method, { namespace, suggestions: nearMethods(method, known) });
}
