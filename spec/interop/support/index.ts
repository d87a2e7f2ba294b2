export { freePort } from './free-port.js';
export { runProgram } from './run-program.js';
export type { ProgramResult, RunOptions } from './run-program.js';
export { dockerCli, DOCKER_CLI } from './docker-cli.js';
export type { DockerCli, DockerAuthEntry } from './docker-cli.js';
export { startRegistry } from './registry.js';
export type { RegistryOptions, RunningRegistry } from './registry.js';
export { startTokenServer } from './token-server.js';
export type { RunningTokenServer, TokenServerOptions } from './token-server.js';
