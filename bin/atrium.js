#!/usr/bin/env node
// The built CLI (npm install runs the build through the `prepare` script).
import { setFlagsFromString } from 'node:v8';

// Start-up allocates mostly objects that live on (modules, routes, the database): while V8 sees
// them survive, it doubles its young generation up to 32 MB, memory that stays resident when the
// server then sits idle. It keeps its first size until the server is listening (the server command
// sets the factor back to V8's default of 2 then: under load a larger young generation is faster).
setFlagsFromString('--semi-space-growth-factor=1');

const { main } = await import('../dist/atrium.js');
await main(process.argv);
