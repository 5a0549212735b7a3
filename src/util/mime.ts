import type Mime from 'mime-types';
import { lazyRequire } from './lazy-require.js';

/** mime-types, loaded by the first request that needs a type (its 200 KB table costs ~40 ms at start-up). */
export const mimeTypes = lazyRequire<typeof Mime>('mime-types');
