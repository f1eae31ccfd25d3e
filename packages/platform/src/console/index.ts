export { consoleRouteUrls, installConsole } from './console-site.js';
