"""pytest plugin for scripts/client-suites.sh. After each test, os.environ is put back if a test
replaced it (see ENVIRON). Before each test, the offline images the suites
pull by name (alpine:3.10, alpine:3.10.1, alpine:latest, busybox:latest, busybox:1.31.0-uclibc,
busybox:1.27.2) are imported if
missing (at the start, or after a test removed them: docker-py's test_prune_images prunes every
unused image), from the root filesystem archive in CS_SEED_ROOTFS, the same on every engine.
Without internet a test would otherwise fail on a pull."""
import os

import docker
import pytest

# docker-py's credentials/utils_test.py rebinds os.environ to a plain dict of its own and leaves
# it so (mock.patch.dict restores the old mapping's contents, not the name): every later test
# would lose DOCKER_HOST and talk to /var/run/docker.sock, whatever engine the run is for.
ENVIRON = os.environ


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    if os.environ is not ENVIRON:
        os.environ = ENVIRON

NAMES = ('alpine:3.10', 'alpine:3.10.1', 'alpine:latest', 'busybox:latest', 'busybox:1.31.0-uclibc', 'busybox:1.27.2')
CHANGES = ['CMD ["sh"]', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    rootfs = os.environ.get('CS_SEED_ROOTFS')
    if not rootfs:
        return
    client = docker.APIClient(version='auto', base_url=os.environ['DOCKER_HOST'])
    try:
        tags = {t for i in client.images() for t in (i.get('RepoTags') or [])}
        missing = [n for n in NAMES if n not in tags]
        if not missing:
            return
        if os.environ.get('CS_SEED_LOG'):
            with open(os.environ['CS_SEED_LOG'], 'a') as log:
                log.write(f'{item.nodeid}: restoring {" ".join(missing)}\n')
        have = next((n for n in NAMES if n in tags), None)
        if have is None:
            client.import_image(src=rootfs, repository='alpine', tag='3.10', changes=CHANGES)
            have = 'alpine:3.10'
        for n in missing:
            repo, tag = n.split(':')
            if n != have:
                client.tag(have, repo, tag)
    finally:
        client.close()
