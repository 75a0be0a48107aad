import type { WireExchangeType } from '../contract';

export interface Binding {
  readonly queue: string;
  readonly pattern: string;
}

export interface MemoryExchange {
  readonly name: string;
  readonly type: WireExchangeType;
  readonly durable: boolean;
  readonly bindings: Binding[];
}

/** The queues an exchange routes `routingKey` to, each once. */
export function route(exchange: MemoryExchange, routingKey: string): Set<string> {
  const out = new Set<string>();
  for (const b of exchange.bindings) {
    if (exchange.type === 'fanout' || (exchange.type === 'direct' ? b.pattern === routingKey : topicMatches(b.pattern, routingKey))) out.add(b.queue);
  }
  return out;
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
