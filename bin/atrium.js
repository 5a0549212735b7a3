#!/usr/bin/env node
// The built CLI (npm install runs the build through the `prepare` script).
import { setFlagsFromString } from 'node:v8';

// Start-up allocates mostly objects that live on (modules, routes, the database): seeing them
// survive, V8 doubles its young generation (to 16 MB at a default start), memory that stays
// resident while the server then sits idle (~15 MB of RSS). It keeps its first size until the
// server is listening; then, or before any other command runs, V8's default factor (2) is set
// back (releaseYoungGeneration in src/cli/server.ts): under load a larger young generation is faster.
setFlagsFromString('--semi-space-growth-factor=1');

const { main } = await import('../dist/atrium.js');
await main(process.argv);
