import type { WireExchangeType, WireHeaders } from '../contract';

/** A binding: to a queue, or (exchange-to-exchange) to another exchange that routes the message on. */
export interface Binding {
  readonly queue: string;
  readonly pattern: string;
  /** true: `queue` names an exchange (RabbitMQ's exchange.bind). */
  readonly toExchange?: boolean;
  /** A headers exchange's match: `x-match` (`all`, the default, or `any`) and the values wanted. */
  readonly args?: Readonly<Record<string, unknown>>;
}

export interface MemoryExchange {
  readonly name: string;
  readonly type: WireExchangeType;
  readonly durable: boolean;
  readonly bindings: Binding[];
}

/**
 * The queues a message reaches from `exchange`, each once, following exchange-to-exchange
 * bindings (each exchange visited once, as RabbitMQ does, so a cycle ends).
 */
export function route(exchange: MemoryExchange, routingKey: string, headers: WireHeaders | undefined, exchangeOf: (name: string) => MemoryExchange | undefined): Set<string> {
  const out = new Set<string>();
  const visited = new Set<string>();
  const visit = (e: MemoryExchange): void => {
    if (visited.has(e.name)) return;
    visited.add(e.name);
    for (const b of e.bindings) {
      if (!matches(e.type, b, routingKey, headers)) continue;
      if (!b.toExchange) out.add(b.queue);
      else {
        const next = exchangeOf(b.queue);
        if (next) visit(next);
      }
    }
  };
  visit(exchange);
  return out;
}

function matches(type: WireExchangeType, b: Binding, routingKey: string, headers: WireHeaders | undefined): boolean {
  switch (type) {
    case 'fanout': return true;
    case 'direct': return b.pattern === routingKey;
    case 'topic': return topicMatches(b.pattern, routingKey);
    case 'headers': return headersMatch(b.args ?? {}, headers ?? {});
    default: {
      const never: never = type;
      return never;
    }
  }
}

/**
 * RabbitMQ's headers exchange: every binding argument but those starting `x-` must equal the
 * message's header of that name (`x-match: all`, the default) or one of them must (`any`).
 * Values compare as RabbitMQ compares them for strings and numbers (same value, same kind).
 */
export function headersMatch(args: Readonly<Record<string, unknown>>, headers: WireHeaders): boolean {
  const wanted = Object.entries(args).filter(([k]) => !k.startsWith('x-'));
  const hit = ([k, v]: [string, unknown]): boolean => Object.prototype.hasOwnProperty.call(headers, k) && headers[k] === v;
  return args['x-match'] === 'any' ? wanted.some(hit) : wanted.every(hit);
}

/** AMQP topic matching: words split on '.', `*` is one word, `#` zero or more. */
export function topicMatches(pattern: string, key: string): boolean {
  return matchWords(pattern.split('.'), 0, key.split('.'), 0);
}

function matchWords(p: string[], i: number, k: string[], j: number): boolean {
  if (i === p.length) return j === k.length;
  const word = p[i];
  if (word === '#') {
    for (let skip = j; skip <= k.length; skip++) if (matchWords(p, i + 1, k, skip)) return true;
    return false;
  }
  if (j === k.length) return false;
  return (word === '*' || word === k[j]) && matchWords(p, i + 1, k, j + 1);
}
