import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox, contextOf } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call, run } = tenantSandbox('dockgate-iso-cache');


const DOCKERFILE = 'FROM busybox\nRUN echo "$http_proxy" > /p\n';

/** Builds DOCKERFILE as `user`, tagged `tag`, with these query parameters; the message stream. */
async function build(user: string, tag: string, query: Record<string, string> = {}): Promise<string> {
  const params = new URLSearchParams({ t: tag, ...query });
  const res = await call(user, 'POST', `/build?${params}`, await contextOf(DOCKERFILE));
  const stream = res.body.toString();
  expect({ status: res.status, ok: stream.includes('Successfully built') ? true : stream }).toEqual({ status: 200, ok: true });
  return stream;
}

/** What `/p` holds in the image. */
async function proxyIn(user: string, image: string): Promise<string> {
  return (await run(user, { Image: image, Cmd: ['cat', '/p'] })).out;
}

d('the build cache is per owner, with the proxy args and the RUN containers\' host config in the key', () => {
  test('carol\'s identical build does not reuse bob\'s layer built through bob\'s proxy', async () => {
    await build('bob', 'bob/p:1', { buildargs: JSON.stringify({ http_proxy: 'http://bob-proxy:3128' }) });
    expect(await proxyIn('bob', 'bob/p:1')).toBe('http://bob-proxy:3128\n');
    const same = await build('carol', 'carol/p:1', { buildargs: JSON.stringify({ http_proxy: 'http://bob-proxy:3128' }) });
    expect(same).not.toContain('Using cache');
    const other = await build('carol', 'carol/p:2', { buildargs: JSON.stringify({ http_proxy: 'http://carol-proxy:3128' }) });
    expect(other).not.toContain('Using cache');
    expect(await proxyIn('carol', 'carol/p:2')).toBe('http://carol-proxy:3128\n');
    await build('carol', 'carol/p:3');
    expect(await proxyIn('carol', 'carol/p:3')).toBe('\n');
  });

  test('one owner\'s builds hit the cache only with the same proxy args and host config', async () => {
    await build('dave', 'dave/p:1', { buildargs: JSON.stringify({ HTTPS_PROXY: 'http://a:1' }) });
    expect(await build('dave', 'dave/p:1', { buildargs: JSON.stringify({ HTTPS_PROXY: 'http://a:1' }) })).toContain('Using cache');
    expect(await build('dave', 'dave/p:2', { buildargs: JSON.stringify({ HTTPS_PROXY: 'http://b:1' }) })).not.toContain('Using cache');
    expect(await build('dave', 'dave/p:3', { buildargs: JSON.stringify({ HTTPS_PROXY: 'http://a:1' }), networkmode: 'none' })).not.toContain('Using cache');
    expect(await build('dave', 'dave/p:4', { buildargs: JSON.stringify({ HTTPS_PROXY: 'http://a:1' }), memory: String(256 * 1024 * 1024) })).not.toContain('Using cache');
  });
});
