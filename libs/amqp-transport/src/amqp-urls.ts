/**
 * Refuses, at once, a RabbitMQ URL that is not `amqp://` or `amqps://`: amqplib would try an
 * `http://` one again and again, and the connection would retry it for ever. The message names
 * the option and the entry's scheme, never the URL (it may hold a password). The environment's
 * AMQP_URL is checked alike when it is read (@warren/config's env-kinds.ts).
 *
 * @example checkAmqpUrls(["http://127.0.0.1:15672"]) // TypeError: urls[0] must be an amqp:// or amqps:// URL (it has scheme "http:")
 */
export function checkAmqpUrls(urls: readonly string[]): void {
  urls.forEach((url, i) => {
    // The scheme only: the rest is amqplib's to read (it takes URLs WHATWG's parser refuses, such as a password with an unescaped '#').
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
    if (scheme === 'amqp' || scheme === 'amqps') return;
    throw new TypeError(`urls[${i}] must be an amqp:// or amqps:// URL (${scheme === undefined ? 'it has no scheme' : `it has scheme "${scheme}:"`})`);
  });
}
