import { localDriver } from './local/index.js';
import type { DriverFactory } from './types.js';

/** Every driver this server knows, by its wire name (the storage's `driver` field). */
const DRIVERS = new Map<string, DriverFactory>([[localDriver.config.name, localDriver]]);

export function driverFactory(name: string): DriverFactory | undefined {
  return DRIVERS.get(name);
}

export function driverNames(): string[] {
  return [...DRIVERS.keys()];
}
