import { Readable } from 'node:stream';
import type { EngineEvent, EventsOptions } from '../../../engine-api/runtime-types.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import { nowMs } from './output-log.js';
import { labelMatches } from './label-filter.js';
import { SlowEventsSubscriberError } from './events-error.js';

/** The longest delay setTimeout holds (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Events one subscriber may have waiting unread. A client that stops reading (its socket full)
 * while containers keep changing is cut off beyond it rather than buffered without bound, as
 * dockerd's event publisher drops a subscriber that does not keep up.
 */
export const MAX_PENDING_EVENTS = 1024;

/**
 * Lifecycle events of a local runtime, with a bounded history so `since` can replay recent
 * ones (the Docker CLI below API 1.30 waits for a container's exit through `/events`).
 */
export class EventBus {
  private history: EngineEvent[] = [];
  private subscribers = new Set<(event: EngineEvent) => void>();

  constructor(private readonly historySize = 256) {}

  /** An image event (`tag`, `untag`, `delete`) as dockerd sends it: Actor.ID is the image id. */
  publishImage(action: string, imageId: string, name: string): void {
    const ms = nowMs();
    this.push({
      status: action,
      id: imageId,
      Type: 'image',
      Action: action,
      Actor: { ID: imageId, Attributes: { name } },
      scope: 'local',
      time: Math.floor(ms / 1000),
      timeNano: Math.floor(ms * 1e6),
    });
  }

  publish(action: string, container: { id: string; name: string; image: string; labels: Record<string, string> }, extra: Record<string, string> = {}): void {
    const ms = nowMs();
    const event: EngineEvent = {
      status: action,
      id: container.id,
      from: container.image,
      Type: 'container',
      Action: action,
      Actor: { ID: container.id, Attributes: { ...container.labels, ...extra, image: container.image, name: container.name } },
      scope: 'local',
      time: Math.floor(ms / 1000),
      timeNano: Math.floor(ms * 1e6),
    };
    this.push(event);
  }

  private push(event: EngineEvent): void {
    this.history.push(event);
    if (this.history.length > this.historySize) this.history.shift();
    for (const deliver of this.subscribers) deliver(event);
  }

  /** An object-mode stream of matching events; subscribed before this returns. */
  subscribe(options: EventsOptions): Readable {
    const { since, until, filters, signal } = options;
    const stream = new Readable({ objectMode: true, read() {} });
    const accept = (e: EngineEvent): boolean => matches(e, filters) && (until === undefined || e.timeNano / 1e6 <= until);
    if (since !== undefined) for (const e of this.history) if (e.timeNano / 1e6 >= since && accept(e)) stream.push(e);
    const deliver = (e: EngineEvent): void => {
      if (!accept(e)) return;
      if (stream.readableLength >= MAX_PENDING_EVENTS) {
        this.subscribers.delete(deliver);
        clearTimeout(timer);
        stream.destroy(new SlowEventsSubscriberError('events subscriber too slow: dropped'));
        return;
      }
      stream.push(e);
    };
    const stop = (): void => {
      this.subscribers.delete(deliver);
      clearTimeout(timer);
      stream.push(null);
    };
    this.subscribers.add(deliver);
    // setTimeout fires at once for delays over 2^31-1 ms (~24.8 days); an `until` further away
    // than that is as good as none for one connection.
    const delay = until === undefined ? undefined : Math.max(0, until - nowMs());
    const timer = delay === undefined || delay > MAX_TIMER_MS ? undefined : setTimeout(stop, delay);
    signal.addEventListener('abort', () => {
      this.subscribers.delete(deliver);
      clearTimeout(timer);
      stream.destroy();
    });
    return stream;
  }
}

function matches(e: EngineEvent, filters: EngineFilters): boolean {
  const want = (name: string, ...values: (string | undefined)[]): boolean => {
    const set = filters.get(name);
    return set === undefined || set.size === 0 || values.some((v) => v !== undefined && set.has(v));
  };
  const attrs = e.Actor.Attributes;
  const labels = filters.get('label');
  const labelOk =
    labels === undefined ||
    [...labels].every((l) => labelMatches(attrs, l));
  return (
    want('type', e.Type) &&
    // dockerd matches `health_status`, `exec_create` and `exec_start` without the `: …` detail too (events/filter.go).
    want('event', e.Action, /^(health_status|exec_create|exec_start):/.test(e.Action) ? e.Action.slice(0, e.Action.indexOf(':')) : undefined) &&
    want('container', ...(e.Type === 'container' ? [e.Actor.ID, attrs.name] : [])) &&
    // An image event's actor is the image itself (its id, and the reference in `name`).
    want('image', ...(e.Type === 'image' ? [e.Actor.ID, attrs.name] : [attrs.image])) &&
    labelOk
  );
}

