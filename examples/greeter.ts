import { Type } from '@sinclair/typebox';
import { defineMethod, startService } from '@warren/amqp';

const greet = defineMethod(
  { params: Type.Object({ name: Type.String() }), result: Type.String() },
  (p) => `Hello, ${p.name}!`,
);

void startService({ urls: process.env.AMQP_URL ?? 'amqp://127.0.0.1', namespace: process.env.WARREN_NAMESPACE || 'warren', name: 'greeter', methods: { greet } });
