export { resolveMetrics, type MetricsOptions } from './metrics-options.js';
export { dockgateMetrics, type DockgateMetrics, type BearerResult, type Backend, type RunningContainers } from './dockgate-metrics.js';
