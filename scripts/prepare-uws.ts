/**
 * Part of `npm run build`: loads the uWebSockets.js binary for this Node once, so that where the
 * machine's glibc is older than 2.38 its rewrite is already in dist/uws-glibc-2.36/ when the
 * service starts somewhere it cannot write (deploy/wires.service). Build with the Node that runs
 * the service.
 */
import { loadUws } from '../src/http/uws.js';

const u = loadUws();
console.log(`uWebSockets.js ${u.version} for Node ${process.version}: ${u.binary}${u.glibcCompat ? ' (the glibc 2.36 rewrite)' : ''}`);
