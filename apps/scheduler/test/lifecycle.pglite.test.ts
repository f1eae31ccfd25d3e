import { lifecycleSuite } from './lifecycle.suite.js';

lifecycleSuite('embedded PGlite', async () => ({}));
