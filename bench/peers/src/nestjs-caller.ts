/**
 * A NestJS RMQ ClientProxy (`ClientProxyFactory.create` with `Transport.RMQ`) sending the `add`
 * pattern with [a, b]: its defaults, direct reply-to consumed with `noAck: true`, non-persistent
 * requests. It declares the service's queue too, with the same options (a mismatch would close its
 * channel). `noDelay` through `socketOptions.connectionOptions`.
 */
import { Logger } from '@nestjs/common';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom, timeout } from 'rxjs';
import { expectSum, type OpenFn } from './contract.js';

export const open: OpenFn = async (spec) => {
  // Nest's logger writes to stdout, the caller process's protocol with the bench; it logs nothing per call.
  Logger.overrideLogger(false);
  const client = ClientProxyFactory.create({
    transport: Transport.RMQ,
    options: {
      urls: [spec.url],
      queue: `${spec.name}.add`,
      queueOptions: { durable: true, arguments: { 'x-expires': 60_000 } },
      socketOptions: { connectionOptions: { noDelay: true } },
    },
  });
  await client.connect();
  let n = 0;
  return {
    call: async () => {
      const a = n++;
      // A deadline as its docs add one (the client has none of its own): every bench caller fails a late call.
      expectSum(await firstValueFrom(client.send<number>('add', [a, 1]).pipe(timeout(spec.timeoutMs))), a, 1);
    },
    stop: async () => {
      await client.close();
    },
  };
};
