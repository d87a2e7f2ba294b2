/** One JSON-lines progress message in dockerd's jsonmessage shape, CRLF-terminated as its stream formatter writes them. */
export const line = (message: Record<string, unknown>): string => `${JSON.stringify(message)}\r\n`;

/** A per-layer progress message (`Pulling fs layer`, `Pushing`, `Pushed`…) with its short id. */
export const layerLine = (status: string, id: string, progressDetail: Record<string, number> = {}): string => line({ status, progressDetail, id });

/** The final in-band failure dockerd writes once its 200 is out (`{"errorDetail":{"message":…},"error":…}`). */
export const errorLine = (message: string): string => line({ errorDetail: { message }, error: message });
