/**
 * A NestJS microservice on the RMQ transport answering the `add` pattern, as its docs set one up:
 * `NestFactory.createMicroservice` with `Transport.RMQ`, a durable queue of the bench's, Nest's
 * defaults otherwise. Its default `noAck: true` (the broker counts a delivery as acked on sending it)
 * means no basic.qos limit applies: the bench's prefetch is passed as `prefetchCount`, which RabbitMQ
 * ignores for such a consumer. `noDelay` reaches amqplib through `socketOptions.connectionOptions`
 * (amqp-connection-manager hands them to its connect).
 */
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { deleteDeclared } from './cleanup.js';
import { sum, type ServeFn } from './contract.js';

@Controller()
class AddController {
  @MessagePattern('add')
  add(@Payload() params: unknown): number {
    return sum(params);
  }
}

@Module({ controllers: [AddController] })
class BenchModule {}

export const serve: ServeFn = async (spec) => {
  const queue = `${spec.name}.add`;
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(BenchModule, {
    transport: Transport.RMQ,
    options: {
      urls: [spec.url],
      queue,
      // x-expires: a safety net for a crashed run; a clean stop deletes the queue.
      queueOptions: { durable: true, arguments: { 'x-expires': 60_000 } },
      prefetchCount: spec.prefetch,
      socketOptions: { connectionOptions: { noDelay: true } },
    },
    logger: false,
  });
  await app.listen();
  return async () => {
    await app.close();
    await deleteDeclared(spec.url, { queues: [queue], exchanges: [] });
  };
};
