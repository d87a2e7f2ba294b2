import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import type { VersionRange } from '../../../engine-api/version-range.js';
import type { EngineSettings } from '../options.js';

/** What every route of one router shares. */
export interface EngineContext {
  runtime: ContainerRuntime;
  range: VersionRange;
  settings: EngineSettings;
}
