import preset from '../../jest.preset.js';

// @runplane/contracts decorates its DTOs at import time, which needs the Reflect metadata API.
export default { ...preset, setupFiles: ['reflect-metadata'] };
