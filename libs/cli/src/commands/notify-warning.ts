import { lookUpServices } from '../availability';
import type { Session } from '../session';

/**
 * After `warren notify` found nobody subscribing (RabbitMQ returned it), or named a method a service
 * serves: a warning that names `warren enqueue`, the way to queue a job on a method's queue.
 */
export async function notifyWarning(s: Session, method: string, routed: boolean): Promise<void> {
  const served = (await lookUpServices(s, [method])).get(method);
  if (routed && served === undefined) return;
  const what = routed ? 'it reached its subscribers' : 'nobody subscribes to it: RabbitMQ dropped it';
  const hint = served === undefined ? '' : `; ${method} is a method of ${served.service}: to queue a job on it, use \`warren enqueue ${method} ...\``;
  s.err(s.c.yellow(`warning: ${what}${hint}`));
}
