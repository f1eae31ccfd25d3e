export { RunplaneMetrics } from './runplane-metrics.js';
export { MeteredBus } from './metered-bus.js';
export { MetricsController } from './metrics.controller.js';
export { installHttpMetrics } from './http-metrics.js';
export { metricsAllowList } from './allow-list.js';
