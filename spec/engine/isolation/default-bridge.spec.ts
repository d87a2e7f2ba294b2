import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { call, start, run } = tenantSandbox('dockgate-iso-bridge');
const made: [string, string][] = [];
const removeMade = async () => {
  for (const [user, id] of made.splice(0)) await call(user, 'DELETE', `/containers/${id}?force=1`);
};

/** `nc` to the address, the service's answer or `unreachable`. */
const dial = (ip: string) => ({ Cmd: ['sh', '-c', `nc -w 3 ${ip} 8080 || echo unreachable`] });

describeWithPeers('the default bridge is one per owner: a tenant\'s containers cannot reach another tenant\'s on it', [bwrap], () => {
  test('carol cannot reach bob\'s unpublished service on the default bridge; bob\'s second container still does', async () => {
    const web = await start('bob', { Cmd: ['sh', '-c', 'while true; do echo bob-secret | nc -l -p 8080; done'] });
    made.push(['bob', web]);
    const ip = (await call('bob', 'GET', `/containers/${web}/json`)).json.NetworkSettings.Networks.bridge.IPAddress as string;
    expect(ip).toMatch(/^172\.17\./);
    const carols = await run('carol', dial(ip));
    made.push(['carol', carols.id]);
    expect(carols.out).not.toContain('bob-secret');
    const bobs = await run('bob', dial(ip));
    made.push(['bob', bobs.id]);
    expect(bobs.out).toContain('bob-secret');
    await removeMade();
  });

  test('the addresses stay unique across owners, and each owner\'s containers share one gateway', async () => {
    const a = await start('bob', { Cmd: ['sleep', '30'] });
    const b = await start('carol', { Cmd: ['sleep', '30'] });
    made.push(['bob', a], ['carol', b]);
    const bridgeOf = async (user: string, id: string) => (await call(user, 'GET', `/containers/${id}/json`)).json.NetworkSettings.Networks.bridge;
    const [ea, eb] = [await bridgeOf('bob', a), await bridgeOf('carol', b)];
    expect(ea.IPAddress).not.toBe(eb.IPAddress);
    expect([ea.Gateway, eb.Gateway]).toEqual(['172.17.0.1', '172.17.0.1']);
    await removeMade();
  });
});
