// Preload for peer servers that cannot be told which address to bind to.
//
// @modelcontextprotocol/server-everything (streamableHttp and sse modes) calls
// `app.listen(PORT)` with no host, i.e. listens on all interfaces. Test peers must bind to
// loopback only, so this makes every listen() call that names a port but no host bind
// 127.0.0.1 instead:
//
//   PORT=N node --require ./conformance/peers/bind-localhost.cjs \
//       .interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp
//
// (Works with ES-module entry points too: --require runs before the main module loads.)
"use strict";

const net = require("node:net");

const HOST = process.env.BIND_HOST || "127.0.0.1";
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const [first, second] = args;
  const isPort = (v) => typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v));
  if (isPort(first) && (second === undefined || typeof second === "function")) {
    // listen(port[, callback]) -> listen(port, host[, callback])
    args.splice(1, 0, HOST);
  } else if (first && typeof first === "object" && !Array.isArray(first) && first.host === undefined
             && first.path === undefined && first.fd === undefined && !first._handle) {
    // listen({ port, ... }[, callback]) without a host
    args[0] = { ...first, host: HOST };
  }
  return originalListen.apply(this, args);
};
