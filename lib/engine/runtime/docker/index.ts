/** `dockgate/engine/docker`: every call forwarded to a real dockerd. */
export { dockerRuntime, type DockerRuntimeOptions } from './docker-runtime.js';
