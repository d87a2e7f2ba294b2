import { DockgateError } from '../../../errors/dockgate-error.js';

/** An events subscriber read too slowly and was dropped, so one slow client cannot hold the runtime's memory. */
export class SlowEventsSubscriberError extends DockgateError {
  static override code = 'ERR_EVENTS_SUBSCRIBER_SLOW';
  override readonly code = 'ERR_EVENTS_SUBSCRIBER_SLOW';
}
