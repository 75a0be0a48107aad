import type { ServiceMethod } from '@warren/amqp';

/**
 * The broker's own methods as MCP tools, when `brokerTools` asks for it (off by default, so an
 * MCP client's tool list holds the services' tools only): an agent lists, follows and cancels its
 * calls, an operator's agent browses and replays dead letters. The gateway's authorization rule
 * (authz.ts) applies to tools as to POST /rpc: a client token's session neither lists nor calls
 * the operator's ones, and reaches only its own calls.
 */
const descriptions: Readonly<Record<string, string>> = {
  'inflight.list': 'List calls running now (a client token sees only its own).',
  'inflight.status': "One call's state and stored outcome, by call id (a client token: its own calls only).",
  'inflight.cancel': 'Cancel a call by call id (a client token: its own calls only).',
  'history.list': 'Finished calls, newest first, filtered by method, service, worker, code, state and time, paged (a client token sees only its own).',
  'calls.show': "Everything known of one call by call id: state, attempt, worker, progress, outcome and history entry (a client token: its own calls only).",
  'inflight.workers': 'Live worker instances and their in-flight counts (operator tokens only).',
  'dlq.list': 'List dead-lettered requests (operator tokens only).',
  'dlq.show': 'Show one dead letter with its request (operator tokens only).',
  'dlq.replay': 'Replay dead letters as new calls (operator tokens only).',
  'dlq.purge': "Empty a service's dead-letter queue (operator tokens only).",
  'workers.pause': 'Pause one worker instance: it stops consuming, its calls wait in the queue (operator tokens only).',
  'workers.resume': 'Resume a paused worker instance (operator tokens only).',
  'workers.drain': 'Drain one worker instance: it finishes its running calls, then stops (operator tokens only).',
  'workers.cancelAll': 'Cancel every call running on one worker instance (operator tokens only).',
  'schedule.list': 'List schedules with their last run, outcome, next run and paused state.',
  'schedule.add': 'Add a periodic schedule: a method, params, a cron expression or interval (operator tokens only).',
  'schedule.remove': 'Remove a schedule (operator tokens only).',
  'schedule.pause': 'Pause a schedule (operator tokens only).',
  'schedule.resume': 'Resume a paused schedule (operator tokens only).',
  'schedule.runNow': "Fire a schedule's call now (operator tokens only).",
};

/** `methods` with a tool spec on each broker method named above (the rest as they are). */
export function withBrokerTools(methods: Readonly<Record<string, ServiceMethod>>): Record<string, ServiceMethod> {
  return Object.fromEntries(Object.entries(methods).map(([name, m]) => {
    const description = descriptions[name];
    return [name, description === undefined ? m : { ...m, tool: { description } }];
  }));
}
