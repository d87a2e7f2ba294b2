import { DockgateError } from '../errors/dockgate-error.js';

/** A multiplexed (stdcopy) stream that breaks the framing: an unknown stream type, or an end inside a frame. */
export class StdcopyFramingError extends DockgateError {
  static override code = 'ERR_STDCOPY_FRAMING';
  override readonly code = 'ERR_STDCOPY_FRAMING';
}
