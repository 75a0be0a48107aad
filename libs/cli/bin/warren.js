#!/usr/bin/env node
// The `warren` command. Runs the compiled CLI (dist/) when it has been built
// (`npm run build`, and in the Docker image); otherwise, in a checkout right
// after `npm ci`, it loads the TypeScript sources through tsx, resolving the
// @warren/* packages with the repository's tsconfig paths.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', 'dist', 'index.js');
let cli;
if (fs.existsSync(dist)) {
  cli = require(dist);
} else {
  const tsconfig = path.resolve(__dirname, '..', '..', '..', 'tsconfig.json');
  if (!process.env.TSX_TSCONFIG_PATH && fs.existsSync(tsconfig)) process.env.TSX_TSCONFIG_PATH = tsconfig;
  require('tsx/cjs');
  cli = require(path.join(__dirname, '..', 'src', 'index.ts'));
}
cli.main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`warren: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
