"""Compares two JUnit XMLs of the same suite (dockerd's, then dockgate's): prints each side's
counts and every test that passes on the first and not on the second, with its first error line."""
import sys
import xml.etree.ElementTree as ET


def results(path):
    out = {}
    for tc in ET.parse(path).getroot().iter('testcase'):
        name = f"{tc.get('classname').split('.')[-1]}::{tc.get('name')}"
        mod = tc.get('classname').split('.')[-2] if '.' in tc.get('classname') else ''
        bad = [c for c in tc if c.tag in ('failure', 'error')]
        skipped = [c for c in tc if c.tag == 'skipped']
        if bad:
            text = (bad[0].get('message') or '') + '\n' + (bad[0].text or '')
            lines = [l for l in text.split('\n') if l.startswith('E ')] or [bad[0].get('message') or '']
            out[f'{mod}.{name}'] = ('fail', lines[-1][:220])
        elif skipped:
            out[f'{mod}.{name}'] = ('skip', '')
        else:
            out[f'{mod}.{name}'] = ('pass', '')
    return out


ref, got = results(sys.argv[1]), results(sys.argv[2])
for label, r in (('reference', ref), ('compared', got)):
    counts = {k: sum(1 for v in r.values() if v[0] == k) for k in ('pass', 'fail', 'skip')}
    print(label, len(r), counts)
worse = sorted(k for k in ref if ref[k][0] == 'pass' and got.get(k, ('missing',))[0] != 'pass')
better = sorted(k for k in got if got[k][0] == 'pass' and ref.get(k, ('missing',))[0] != 'pass')
print(f'\npass on reference, not on compared ({len(worse)}):')
for k in worse:
    print(f'  {k}: {got.get(k, ("missing", ""))[1]}')
print(f'\npass on compared, not on reference ({len(better)}):')
for k in better:
    print(f'  {k}: {ref.get(k, ("missing", ""))[1]}')
