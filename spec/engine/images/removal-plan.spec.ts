import { describe, expect, test } from '@jest/globals';
import type { ImageRecord } from '../../../lib/engine/images/image-store-types.js';
import { planRemoval } from '../../../lib/engine/images/store/removal-plan.js';

const ID = `sha256:${'a'.repeat(64)}`;
const record = (repoTags: string[], repoDigests: string[] = []): ImageRecord => ({ id: ID, repoTags, repoDigests, layers: [] });
const stopped = [{ id: 'b'.repeat(64), running: false }];
const running = [{ id: 'c'.repeat(64), running: true }];

describe('docker rmi by reference untags; the last reference also deletes (image_delete.go)', () => {
  test('one of two tags: only untagged', () => {
    expect(planRemoval(record(['x:1', 'x:2']), 'x:1', false, [])).toEqual({ untag: ['x:1'], deleteImage: false });
  });
  test('the last tag: untagged and deleted', () => {
    expect(planRemoval(record(['x:1']), 'x:1', false, [])).toEqual({ untag: ['x:1'], deleteImage: true });
  });
  test('the last tag of an image a stopped container uses needs force', () => {
    expect(() => planRemoval(record(['x:1']), 'x:1', false, stopped, 'x')).toThrow(`conflict: unable to remove repository reference "x" (must force) - container bbbbbbbbbbbb is using its referenced image aaaaaaaaaaaa`);
    expect(planRemoval(record(['x:1']), 'x:1', true, stopped)).toEqual({ untag: ['x:1'], deleteImage: true });
  });
  test('forced, the last tag of an image a running container uses is untagged but the image stays', () => {
    expect(planRemoval(record(['x:1']), 'x:1', true, running)).toEqual({ untag: ['x:1'], deleteImage: false });
  });
});

describe('docker rmi by ID deletes the image and all its references, with dockerd\'s conflicts', () => {
  test('references in several repositories need force', () => {
    expect(() => planRemoval(record(['x:1', 'y:1']), undefined, false, [])).toThrow('conflict: unable to delete aaaaaaaaaaaa (must be forced) - image is referenced in multiple repositories');
    expect(planRemoval(record(['x:1', 'y:1'], ['x@sha256:1']), undefined, true, [])).toEqual({ untag: ['x:1', 'y:1', 'x@sha256:1'], deleteImage: true });
  });
  test('two tags of one repository need no force', () => {
    expect(planRemoval(record(['x:1', 'x:2']), undefined, false, []).deleteImage).toBe(true);
  });
  test('a running container is a conflict even with force; a stopped one needs force', () => {
    expect(() => planRemoval(record(['x:1']), undefined, true, running)).toThrow('(cannot be forced) - image is being used by running container cccccccccccc');
    expect(() => planRemoval(record(['x:1']), undefined, false, stopped)).toThrow('(must be forced) - image is being used by stopped container bbbbbbbbbbbb');
  });
});
