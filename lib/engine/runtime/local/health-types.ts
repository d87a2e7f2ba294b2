/** The shapes of a healthcheck (what a container record keeps), apart from the prober that fills them. */

/** `Config.Healthcheck` as the API sends it (durations in nanoseconds, 0 meaning "the default"). */
export interface HealthConfig {
  Test?: string[] | null;
  Interval?: number;
  Timeout?: number;
  StartPeriod?: number;
  Retries?: number;
}

/** One probe's result (`State.Health.Log[]`). */
export interface HealthLogEntry {
  Start: string;
  End: string;
  ExitCode: number;
  Output: string;
}

export type HealthStatus = 'starting' | 'healthy' | 'unhealthy';

/** `State.Health`. */
export interface HealthState {
  Status: HealthStatus;
  FailingStreak: number;
  Log: HealthLogEntry[];
}
