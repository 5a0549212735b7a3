#!/usr/bin/env node
// The built CLI (npm install runs the build through the `prepare` script).
import { main } from '../dist/atrium.js';

await main(process.argv);
