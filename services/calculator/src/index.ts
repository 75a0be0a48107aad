/**
 * The calculator as a composition: what it is apart from where it connects. Its main (main.ts,
 * RabbitMQ) and embedded mode (scripts/embedded.ts, in memory) both start it from here.
 */
export { calculatorDefaults, calculatorService } from './service';
