import preset from '../../jest.preset.js';

// The suites mostly wait (long polls, timers): running files side by side keeps the total short.
export default { ...preset, maxWorkers: 3 };
