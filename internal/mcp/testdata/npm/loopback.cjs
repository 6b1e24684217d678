// Loaded with `node --require loopback.cjs`: every server the process starts
// listens on 127.0.0.1 only (whatever host it asked for), and the port it got
// is written to stderr as SCV_LOOPBACK_PORT=<port> for the test to read.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args.length > 0 && typeof args[0] === 'object' && args[0] !== null) {
    args[0] = Object.assign({}, args[0], { host: '127.0.0.1' });
  } else if (args.length > 0 && (typeof args[0] === 'number' || typeof args[0] === 'string')) {
    const callbacks = args.slice(1).filter((a) => typeof a === 'function');
    args = [args[0], '127.0.0.1', ...callbacks];
  }
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object' && a.port) {
      process.stderr.write(`SCV_LOOPBACK_PORT=${a.port}\n`);
    }
  });
  return listen.apply(this, args);
};
