/** The engine API client (a separate entry from the registry token clients). */
export { EngineClient, ENGINE_CLIENT_API_VERSION, type EngineClientOptions, type ContainerOutput } from './engine-client/engine-client.js';
export { EngineClientError } from './engine-client/engine-client-error.js';
