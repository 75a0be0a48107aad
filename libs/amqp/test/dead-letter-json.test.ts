// Dead letters' AMQP side as JSON (dlq.show, the console): amqplib decodes an AMQP timestamp inside
// a header table as `{ '!': 'timestamp', value: <seconds> }`; it is shown as an ISO date, like a Date.
import { amqpJson, amqpTimeSeconds } from '../src/dead-letters/amqp-json';

const seconds = 1_796_000_000;
const iso = new Date(seconds * 1000).toISOString();

test("x-death's time as amqplib decodes it from RabbitMQ becomes an ISO date, nested tables included", () => {
  const headers = { 'x-death': [{ count: 1, reason: 'rejected', time: { '!': 'timestamp', value: seconds } }], 'x-first-death-reason': 'rejected', sent: new Date(seconds * 1000), big: 2n ** 70n };
  expect(amqpJson(headers)).toEqual({ 'x-death': [{ count: 1, reason: 'rejected', time: iso }], 'x-first-death-reason': 'rejected', sent: iso, big: (2n ** 70n).toString() });
});

test('a tagged value that is not a timestamp, or a timestamp no Date holds, is left as it is', () => {
  expect(amqpJson({ '!': 'float', value: 1.5 })).toEqual({ '!': 'float', value: 1.5 });
  expect(amqpJson({ '!': 'timestamp', value: 1e20 })).toBe(1e20);
});

test('the dead-lettering time reads from a tagged timestamp, a Date or seconds', () => {
  expect(amqpTimeSeconds({ '!': 'timestamp', value: seconds })).toBe(seconds);
  expect(amqpTimeSeconds(new Date(seconds * 1000))).toBe(seconds);
  expect(amqpTimeSeconds(seconds)).toBe(seconds);
  expect(amqpTimeSeconds('yesterday')).toBeUndefined();
});
