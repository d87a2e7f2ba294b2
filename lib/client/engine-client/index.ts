/** `dockgate/client/engine`: a Docker Engine API client (Unix socket or http). */
export { EngineClient, ENGINE_CLIENT_API_VERSION, type EngineClientOptions, type ContainerOutput } from './engine-client.js';
export { EngineClientError } from './engine-client-error.js';
