#!/usr/bin/env node
// The `warren-broker` command: the broker process (dist/main.js), configured by the environment
// (AMQP_URL, REDIS_URL, GATEWAY_*: docs/gateway.md), draining on SIGINT/SIGTERM. In this repository
// `npm start` runs it from the sources instead; this file needs the compiled dist/ (`npm run build`),
// which the published package ships.
'use strict';
require('../dist/main.js');
