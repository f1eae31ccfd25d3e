import preset from '../../jest.preset.js';

// The suites start real servers (seconds each) and run one file at a time (--runInBand).
export default { ...preset, testTimeout: 120_000, slowTestThreshold: 60 };
