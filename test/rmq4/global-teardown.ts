// Stops the RabbitMQ 4.x node if global-setup.ts booted it (one started by .ci/run is left to .ci/run).
export default async function globalTeardown(): Promise<void> {
  const node = globalThis.warrenRabbit4;
  globalThis.warrenRabbit4 = undefined;
  await node?.stop();
}
