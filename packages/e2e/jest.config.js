import preset from '../../jest.preset.js';

// The suites start real servers (seconds each) and spend much of their time waiting on them, so
// two files run at once (--maxWorkers=2): every server listens on a port of its own (PORT=0), on a
// data dir, database or bus namespace of its own. The global setup gives the run one directory for
// the initialised embedded database that standalone servers start on a copy of.
export default {
  ...preset,
  testTimeout: 120_000,
  slowTestThreshold: 60,
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
