/**
 * Interop specs run against real peers (dockerd, docker-registry, ctr, skopeo, redis-server).
 * On a user's machine without a peer the suite is skipped with the reason in its name; with
 * DOCKGATE_REQUIRE_PEERS=1 (set by .ci/run) a missing peer fails the run instead.
 */
import { describe, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface PeerCheck {
  /** What is needed, e.g. "dockerd at /var/run/docker.sock". */
  name: string;
  /** Returns true when the peer is usable. */
  available: () => boolean;
}

export const peersRequired = process.env.DOCKGATE_REQUIRE_PEERS === '1';

/** A program on PATH (or an absolute path) that runs. */
export function program(cmd: string, args: string[] = ['--version']): PeerCheck {
  return {
    name: `${cmd} on PATH`,
    available: () => {
      try {
        execFileSync(cmd, args, { stdio: 'ignore', timeout: 10_000 });
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** The Docker engine answering on its socket. */
export function dockerd(socket = '/var/run/docker.sock'): PeerCheck {
  return {
    name: `dockerd answering at ${socket}`,
    available: () => {
      if (!existsSync(socket)) return false;
      try {
        execFileSync('curl', ['-sf', '--unix-socket', socket, 'http://localhost/_ping'], { stdio: 'ignore', timeout: 10_000 });
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** An image present in the local dockerd (scripts/start-peers.sh imports busybox:local). */
export function dockerImage(ref: string): PeerCheck {
  return {
    name: `image ${ref} in dockerd`,
    available: () => {
      try {
        execFileSync('docker', ['image', 'inspect', ref], { stdio: 'ignore', timeout: 10_000 });
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** redis-server answering PING. */
export function redis(port = 6379): PeerCheck {
  return {
    name: `redis-server on 127.0.0.1:${port}`,
    available: () => {
      try {
        return execFileSync('redis-cli', ['-p', String(port), 'ping'], { timeout: 5_000 }).toString().trim() === 'PONG';
      } catch {
        return false;
      }
    },
  };
}

/**
 * `describe` that runs only when every peer is there; otherwise skips with a visible reason,
 * or fails when DOCKGATE_REQUIRE_PEERS=1.
 */
export function describeWithPeers(title: string, peers: PeerCheck[], body: () => void): void {
  const missing = peers.filter((p) => !p.available()).map((p) => p.name);
  if (missing.length === 0) {
    describe(title, body);
    return;
  }
  const reason = `missing peer: ${missing.join(', ')} (see shared PEERS.md / scripts/start-peers.sh)`;
  if (peersRequired) {
    describe(title, () => {
      test('has its real peers (DOCKGATE_REQUIRE_PEERS=1)', () => {
        throw new Error(reason);
      });
    });
  } else {
    console.warn(`[interop] skipping "${title}": ${reason}`);
    describe.skip(`${title} [skipped: ${reason}]`, body);
  }
}
