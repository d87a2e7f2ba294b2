import { describe, expect, test } from '@jest/globals';
import { MEDIA, parseManifest, selectManifest } from '../../../lib/engine/images/registry/manifests.js';
import { parsePlatform } from '../../../lib/engine/images/store/platform.js';
import { usesPlainHttp } from '../../../lib/engine/images/registry/registry-session.js';
import { decompressedLayer } from '../../../lib/engine/images/store/decompress.js';
import { Readable } from 'node:stream';

const d = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`;
const manifestBody = (mediaType: string, layerType: string = MEDIA.ociLayerGzip) => Buffer.from(JSON.stringify({
  schemaVersion: 2, mediaType, config: { mediaType: MEDIA.ociConfig, digest: d(1), size: 10 }, layers: [{ mediaType: layerType, digest: d(2), size: 20 }],
}));
const entry = (digest: string, os: string, architecture: string, variant?: string) => ({ mediaType: MEDIA.ociManifest, digest, size: 1, platform: { os, architecture, ...(variant ? { variant } : {}) } });
const index = {
  kind: 'index' as const,
  manifests: [
    entry(d(3), 'unknown', 'unknown'),
    entry(d(4), 'linux', 'arm', 'v6'),
    entry(d(5), 'linux', 'arm', 'v7'),
    entry(d(6), 'linux', 'amd64'),
    entry(d(7), 'linux', 'arm64'),
  ],
};

describe('Docker schema 2 and OCI manifests and indexes are accepted; others are refused by name', () => {
  test.each([MEDIA.dockerManifest, MEDIA.ociManifest])('%s is a manifest', (type) => {
    const parsed = parseManifest(manifestBody(type), type);
    expect(parsed).toMatchObject({ kind: 'manifest', config: { digest: d(1) }, layers: [{ digest: d(2) }] });
  });

  test('an OCI manifest served as application/json is told by its body', () => {
    expect(parseManifest(manifestBody(MEDIA.ociManifest), 'application/json').kind).toBe('manifest');
  });

  test.each([MEDIA.dockerList, MEDIA.ociIndex])('%s is an index', (type) => {
    expect(parseManifest(Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: type, manifests: index.manifests })), type).kind).toBe('index');
  });

  test('schema 1 is refused by name', () => {
    expect(() => parseManifest(Buffer.from(JSON.stringify({ schemaVersion: 1, fsLayers: [] })), 'application/vnd.docker.distribution.manifest.v1+prettyjws')).toThrow(/schema 1 is not supported/);
  });

  test('a foreign layer is refused by name', () => {
    expect(() => parseManifest(manifestBody(MEDIA.dockerManifest, MEDIA.dockerForeignLayer), MEDIA.dockerManifest)).toThrow(/foreign/);
  });

  test('a descriptor without a sha256 digest is refused', () => {
    const body = Buffer.from(JSON.stringify({ schemaVersion: 2, config: { mediaType: MEDIA.ociConfig, digest: 'md5:abc', size: 1 }, layers: [] }));
    expect(() => parseManifest(body, MEDIA.ociManifest)).toThrow(/not a sha256 descriptor/);
  });
});

describe('an index entry is picked for the platform (the server\'s, or the request\'s platform field)', () => {
  test('os and architecture match; attestation entries never do', () => {
    expect(selectManifest(index, parsePlatform('linux/amd64')).digest).toBe(d(6));
  });

  test('a variant picks among arm entries; arm64 without a variant is v8', () => {
    expect(selectManifest(index, parsePlatform('linux/arm/v7')).digest).toBe(d(5));
    expect(selectManifest(index, parsePlatform('linux/arm64/v8')).digest).toBe(d(7));
  });

  test('no match is dockerd\'s 404 "no matching manifest"', () => {
    expect(() => selectManifest(index, parsePlatform('linux/s390x'))).toThrow('no matching manifest for linux/s390x in the manifest list entries');
  });
});

describe('plain HTTP only for loopback registries and the configured insecure ones', () => {
  test.each([
    ['127.0.0.1:5000', true], ['127.9.9.9', true], ['localhost:5000', true], ['[::1]:5000', true],
    ['registry.example:5000', false], ['10.0.0.1:5000', false], ['128.0.0.1', false],
  ])('%s → %s', (host, plain) => {
    expect(usesPlainHttp(host as string, new Set())).toBe(plain);
  });

  test('an insecureRegistries entry is spoken to over HTTP', () => {
    expect(usesPlainHttp('registry.lan:5000', new Set(['registry.lan:5000']))).toBe(true);
  });
});

describe('layer compression: gzip by its magic bytes, zstd refused by name', () => {
  test('zstd-compressed layers are a 501 naming zstd', async () => {
    await expect(decompressedLayer(Readable.from([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0])]))).rejects.toMatchObject({ status: 501, message: expect.stringContaining('zstd') });
  });
});
