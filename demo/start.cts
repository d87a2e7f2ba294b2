// The demo's entry (`npm run demo`): sizes the libuv threadpool, then loads the demo (main.js).
//
// CommonJS on purpose: the ESM loader reads modules through the threadpool, so by the time the
// first line of an ES module runs the pool has started with its default of 4 threads, and
// UV_THREADPOOL_SIZE is read only then. A CommonJS entry is read synchronously, so the variable
// set here is the one the pool starts with.
//
// The size: UV_THREADPOOL_SIZE when the operator set it, else no more threads than cores, up to
// libuv's default of 4. Every token the demo signs is a job on this pool (node:crypto's
// asynchronous sign). With more threads than cores the signing jobs of 32 connections spread over
// threads that each wake, preempt the event loop and sleep again; measured on 2 cores with the
// load generator beside it (issue 35: the autocannon CLI in its own process, refresh grants of the
// demo as shipped, CPU per token from /proc): 424-431 µs with four threads, 374-414 µs with two.
const { availableParallelism } = require('node:os') as typeof import('node:os');

if (!process.env['UV_THREADPOOL_SIZE']) {
  process.env['UV_THREADPOOL_SIZE'] = String(Math.max(1, Math.min(4, availableParallelism())));
}
void import('./main.js');
