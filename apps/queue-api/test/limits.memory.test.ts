import { limitsSuite } from './limits.suite.js';

// Standalone: one process, embedded database, limits counted in memory.
limitsSuite('memory', async () => ({}));
