/**
 * The jobs service as a composition: what it is apart from where it connects and stores. Its main
 * (main.ts, RabbitMQ + Redis) and embedded mode (scripts/embedded.ts, in memory) both start it from here.
 */
export { jobsDefaults, jobsService, jobsSettings, jobsTrackerOptions, type JobsSettings } from './service';
