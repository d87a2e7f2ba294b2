/** Jest in ESM mode: jose 6 is ESM-only (see README "Development"). */
export default {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }],
  },
  testTimeout: 30000,
  // Every spec closes what it opens, but one socket left open by a client library (ws keeps a
  // refused upgrade's socket, spec/interop/engine-sdk/attach-ws.spec.ts) must not hold CI until
  // its time limit: Jest exits once the run is judged, and says so.
  forceExit: true,
};
