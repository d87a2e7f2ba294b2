// The bench's server process (forked by bearer-protection.mjs, so the load generator does not
// share its event loop): one Express app with the same tags/list handler twice, once open and
// once behind requireBearer with the same process's tokenRouter as key source.
import express from 'express';
import { bearerGuard } from '../dist/bearer/index.js';
import { tokenRouter } from '../dist/index.js';

process.once('message', ({ privateKeyPem }) => {
  const tokens = tokenRouter({ issuer: 'bench', service: 'registry.bench', keys: { privateKey: privateKeyPem }, allowAnonymous: true });
  const guard = bearerGuard({ realm: 'http://127.0.0.1:1/token', keys: tokens });
  const app = express();
  app.set('etag', false);
  app.set('x-powered-by', false);
  const tagsList = (_req, res) => {
    res.json({ name: 'alice/app', tags: ['1.0', 'latest'] });
  };
  app.get('/open/v2/alice/app/tags/list', tagsList);
  app.get('/v2/alice/app/tags/list', guard('repository:alice/app:pull'), tagsList);
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (msg) => {
    if (msg === 'stop') {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
  });
});
