import type { AnnounceMessage, MethodDescription, NotificationDescription } from '../discovery/announcement';
import { protocolVersion } from '../wire/protocol-schemas';
import type { WorkerReport } from '../wire/worker-control';
import type { ResolvedServiceOptions, ServiceMethod, ServiceNotification } from './service-options';

/** What an instance announces for discovery, built from its options (see docs/schemas/announcement.schema.json). */
export function describeInstance(o: ResolvedServiceOptions, startedAt: number, running: number, consuming = true, worker?: WorkerReport): AnnounceMessage {
  return {
    v: protocolVersion,
    type: 'announce',
    service: o.name,
    instanceId: o.instanceId,
    startedAt,
    intervalMs: o.announceIntervalMs,
    methods: Object.entries(o.methods).map(([name, m]) => describeMethod(name, m)),
    notifications: Object.entries(o.notifications).map(([name, n]) => describeNotification(name, n)),
    instanceNotifications: Object.entries(o.instanceNotifications).map(([name, n]) => describeNotification(name, n)),
    metadata: o.metadata,
    running,
    consuming,
    // Quorum queues are always durable (topology.ts).
    durable: o.durable || o.queueType === 'quorum',
    queueType: o.queueType,
    ...(o.tracker?.report ? { tracking: o.tracker.report() } : {}),
    ...(worker === undefined ? {} : { worker }),
  };
}

function describeMethod(name: string, m: ServiceMethod): MethodDescription {
  return {
    name,
    ...(m.description === undefined ? {} : { description: m.description }),
    ...(m.params === undefined ? {} : { params: m.params }),
    ...(m.result === undefined ? {} : { result: m.result }),
    ...(m.errors === undefined ? {} : { errors: m.errors }),
    ...(m.jobStyle === undefined ? {} : { jobStyle: m.jobStyle }),
    ...(m.tool === undefined ? {} : { tool: m.tool }),
  };
}

function describeNotification(name: string, n: ServiceNotification): NotificationDescription {
  return {
    name,
    ...(n.description === undefined ? {} : { description: n.description }),
    ...(n.params === undefined ? {} : { params: n.params }),
  };
}
