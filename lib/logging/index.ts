export { resolveLogger, requestLog, errorFields, type DockgateLogger } from './logger.js';
