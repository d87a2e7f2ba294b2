export { DockgateError } from './errors/dockgate-error.js';
export * from './scope/index.js';
