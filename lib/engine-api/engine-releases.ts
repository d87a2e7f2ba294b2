/**
 * Engine release → the maximum API version it serves (Docker's version matrix,
 * docs "Engine API version history"). Lets a host say `{ release: '17.04' }` instead of
 * remembering that 17.04 spoke API 1.28.
 *
 * @example
 * ENGINE_RELEASES['17.04']; // '1.28'
 */
export const ENGINE_RELEASES: Readonly<Record<string, string>> = Object.freeze({
  '17.10': '1.33',
  '17.09': '1.32',
  '17.07': '1.31',
  '17.06': '1.30',
  '17.05': '1.29',
  '17.04': '1.28',
  '17.03': '1.27',
  '1.13': '1.26',
  '1.12': '1.24',
  '1.11': '1.23',
  '1.10': '1.22',
  '1.9': '1.21',
  '1.8': '1.20',
  '1.7': '1.19',
  '1.6': '1.18',
});
