export { main } from './cli/index.js';
