import { isIPv4, isIPv6 } from 'node:net';
import dnsPacket from 'dns-packet';

/** DNS response codes the responder uses (RFC 1035 4.1.1). */
const NOERROR = 0;
const FORMERR = 1;
const REFUSED = 5;

/** How long a client may keep an answer: dockerd's embedded DNS answers with 600 s. */
const TTL = 600;

/**
 * One network's embedded DNS, the part that answers: a query for a name it knows (a container's
 * name, short id or alias on the network) gets its addresses, IPv4 for A and IPv6 for AAAA
 * (networks with EnableIPv6); any other name gets REFUSED,
 * so the container's resolver goes on to its next nameserver (slirp4netns's forwarder, which
 * reaches the outside) instead of taking "no such name" for an answer. A known name asked for
 * another type, or for AAAA without IPv6 addresses, gets an empty answer, as dockerd gives it. Undefined for what is not a
 * query at all (nothing is sent back, as a DNS server drops garbage).
 */
export function answerQuery(query: Buffer, lookup: (name: string) => string[] | undefined): Buffer | undefined {
  let packet;
  try {
    packet = dnsPacket.decode(query);
  } catch {
    return undefined;
  }
  if (packet.type !== 'query') return undefined;
  const questions = packet.questions ?? [];
  const reply = (rcode: number, answers: dnsPacket.Answer[] = []): Buffer =>
    dnsPacket.encode({
      type: 'response',
      id: packet.id ?? 0,
      // Recursion desired is echoed; not authoritative, as dockerd answers.
      flags: (packet.flag_rd ? dnsPacket.RECURSION_DESIRED : 0) | rcode,
      questions,
      answers,
    });
  const [question] = questions;
  if (questions.length !== 1 || !question) return reply(FORMERR);
  const addresses = lookup(question.name.replace(/\.$/, '').toLowerCase());
  if (!addresses) return reply(REFUSED);
  // A gets the IPv4 addresses, AAAA the IPv6 ones (a network with EnableIPv6); any other type nothing.
  const type = question.type === 'A' ? 'A' : question.type === 'AAAA' ? 'AAAA' : undefined;
  if (!type) return reply(NOERROR);
  const wanted = addresses.filter((a) => (type === 'A' ? isIPv4(a) : isIPv6(a)));
  return reply(NOERROR, wanted.map((data) => ({ type, class: 'IN', name: question.name, ttl: TTL, data })));
}
