// LDAP logins per second through ldapAuthenticator (one kept service connection: search on it,
// then a bind on a short connection of its own) against the same search-then-bind done with a
// fresh service connection per login (connect, service bind, search, user bind: what a login
// path without reuse costs), measured in the same run against one local slapd.
// Each is measured ROUNDS times in alternating order; the ratio of the means is printed.
//
//   npm run bench:ldap                          (builds dist/ first; needs slapd and ldapadd)
//   BENCH_DURATION=5 BENCH_ROUNDS=3 BENCH_CONCURRENCY=8
import { Client } from 'ldapts';
import { benchNumber } from './support/bench-number.mjs';
import { SERVICE, startSlapd, SUFFIX, USER } from './support/slapd.mjs';
import { ldapAuthenticator } from '../dist/token/authn/ldap/index.js';

const DURATION = benchNumber('BENCH_DURATION', 5);
const ROUNDS = benchNumber('BENCH_ROUNDS', 3);
const CONCURRENCY = benchNumber('BENCH_CONCURRENCY', 8);

async function rate(login) {
  let count = 0;
  const end = Date.now() + DURATION * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) {
      if (!(await login())) throw new Error('login failed');
      count += 1;
    }
  }));
  return count / DURATION;
}

const slapd = await startSlapd();
try {
  const authenticate = ldapAuthenticator({ url: slapd.url, bindDN: SERVICE.dn, bindPassword: SERVICE.password, baseDN: SUFFIX });
  const kept = async () => (await authenticate({ username: USER.uid, password: USER.password, service: 'bench' }))?.subject === USER.uid;
  const fresh = async () => {
    const service = new Client({ url: slapd.url, timeout: 5000 });
    try {
      await service.bind(SERVICE.dn, SERVICE.password);
      const { searchEntries } = await service.search(SUFFIX, { scope: 'sub', filter: `(uid=${USER.uid})`, sizeLimit: 2, attributes: ['1.1'] });
      const user = new Client({ url: slapd.url, timeout: 5000 });
      try {
        await user.bind(searchEntries[0].dn, USER.password);
        return true;
      } finally {
        await user.unbind();
      }
    } finally {
      await service.unbind();
    }
  };
  await rate(kept);
  await rate(fresh);
  const keptRates = [];
  const freshRates = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    if (round % 2 === 0) { keptRates.push(await rate(kept)); freshRates.push(await rate(fresh)); }
    else { freshRates.push(await rate(fresh)); keptRates.push(await rate(kept)); }
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`ldapAuthenticator (kept service connection): ${mean(keptRates).toFixed(0)} logins/s  [${keptRates.map((r) => r.toFixed(0)).join(', ')}]`);
  console.log(`fresh service connection per login:          ${mean(freshRates).toFixed(0)} logins/s  [${freshRates.map((r) => r.toFixed(0)).join(', ')}]`);
  console.log(`ratio kept/fresh: ${(mean(keptRates) / mean(freshRates)).toFixed(2)} (concurrency ${CONCURRENCY}, ${DURATION} s × ${ROUNDS} rounds each)`);
} finally {
  await slapd.stop();
}
