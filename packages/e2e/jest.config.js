import preset from '../../jest.preset.js';

// The suites start real servers (seconds each) and run one file at a time (--runInBand). The
// global setup initialises one embedded database that standalone servers start on a copy of.
export default {
  ...preset,
  testTimeout: 120_000,
  slowTestThreshold: 60,
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
