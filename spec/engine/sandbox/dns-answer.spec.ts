/**
 * A user network's embedded DNS (the answering part, network/dns-answer.ts): the network's own
 * names get their addresses (A the IPv4 ones, AAAA the IPv6 ones), other names REFUSED (the resolver then asks its next nameserver),
 * another record type of a known name an empty answer, as dockerd's embedded DNS answers.
 */
import { describe, expect, test } from '@jest/globals';
import dnsPacket from 'dns-packet';
import { answerQuery } from '../../../lib/engine/runtime/sandbox/network/dns-answer.js';

const names: Record<string, string[]> = { web: ['10.89.0.2', 'fd00:89::2', '10.89.0.3'], db: ['10.89.0.4'] };
const lookup = (name: string): string[] | undefined => names[name];
const query = (name: string, type: dnsPacket.RecordType = 'A', id = 4242): Buffer =>
  dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name, class: 'IN' }] });
const rcode = (packet: dnsPacket.DecodedPacket): string => (packet as unknown as { rcode: string }).rcode;

describe('the embedded DNS answers the network\'s names and refuses the rest', () => {
  test('a known name (any case) gets every address of it, with the query\'s id and question', () => {
    const answer = dnsPacket.decode(answerQuery(query('WEB'), lookup)!);
    expect(answer).toMatchObject({ type: 'response', id: 4242, questions: [{ name: 'WEB', type: 'A' }] });
    expect(rcode(answer)).toBe('NOERROR');
    expect(answer.answers?.map((a) => (a as { data: string }).data)).toEqual(['10.89.0.2', '10.89.0.3']);
    expect(answer.flag_rd).toBe(true);
  });

  test('an unknown name is REFUSED, not NXDOMAIN: the resolver goes on to its next nameserver', () => {
    const answer = dnsPacket.decode(answerQuery(query('example.org'), lookup)!);
    expect(rcode(answer)).toBe('REFUSED');
    expect(answer.answers).toEqual([]);
  });

  test('AAAA for a known name with IPv6 addresses (a network with EnableIPv6): those, and A never lists them', () => {
    const answer = dnsPacket.decode(answerQuery(query('web', 'AAAA'), lookup)!);
    expect(rcode(answer)).toBe('NOERROR');
    expect(answer.answers?.map((a) => [(a as { type: string }).type, (a as { data: string }).data])).toEqual([['AAAA', 'fd00:89::2']]);
  });

  test('AAAA for a known name without IPv6 addresses: an empty NOERROR answer', () => {
    const answer = dnsPacket.decode(answerQuery(query('db', 'AAAA'), lookup)!);
    expect(rcode(answer)).toBe('NOERROR');
    expect(answer.answers).toEqual([]);
  });

  test('two questions in one query: FORMERR; a response or garbage: no answer at all', () => {
    const two = dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'web' }, { type: 'A', name: 'db' }] });
    expect(rcode(dnsPacket.decode(answerQuery(two, lookup)!))).toBe('FORMERR');
    expect(answerQuery(dnsPacket.encode({ type: 'response', id: 1, questions: [{ type: 'A', name: 'web' }] }), lookup)).toBeUndefined();
    expect(answerQuery(Buffer.from('not dns'), lookup)).toBeUndefined();
  });
});
