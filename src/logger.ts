import pino, { type Logger } from 'pino';
import type { Config } from './config/defaults.js';
import { RotatingFile } from './util/rotating-file.js';

export type { Logger };

/** Structured JSON logs to stdout and, when `log.enable`, to the rotated log file. */
export function createLogger(config: Config, opts: { quiet?: boolean } = {}): Logger {
  const level = config.log.level;
  const streams: pino.StreamEntry[] = [];
  if (!opts.quiet) streams.push({ level: level as pino.Level, stream: process.stdout });
  if (config.log.enable && config.log.name) {
    const file = new RotatingFile(config.log.name, {
      maxSizeMb: config.log.max_size,
      maxBackups: config.log.max_backups,
      maxAgeDays: config.log.max_age,
      compress: config.log.compress,
    });
    streams.push({ level: level as pino.Level, stream: file });
  }
  if (streams.length === 0) return pino({ level: 'silent' });
  return pino({ level, base: { pid: process.pid } }, pino.multistream(streams));
}
