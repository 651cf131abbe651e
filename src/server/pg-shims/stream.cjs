// Replaces pg/lib/stream.js in the bundle (scripts/build.mjs). pg sniffs for Cloudflare Workers at load time by
// constructing a fetch `Response`, which on Node 20 loads undici, web streams and worker_threads: ~35 ms of the
// ~60 ms a routed command's hook spent starting (cpu profile, 2026-12-01). pgx runs only on Node, so the sniff goes.
'use strict';
module.exports = {
  getStream() {
    const net = require('net');
    return new net.Socket();
  },
  getSecureStream(options) {
    const tls = require('tls');
    return tls.connect(options);
  },
};
