// Typed errors: every layer throws these; server/envelope.ts maps them to the wire
// envelope ({code, message, data}) in one place.

export class AppError extends Error {
  /** The pseudo-HTTP code placed in the envelope's `code` field. */
  readonly code: number;
  /** Optional `data` carried with the error (storage create returns `{id}` on failure). */
  readonly data: unknown;
  constructor(code: number, message: string, data: unknown = null) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }
}

export class BadRequest extends AppError {
  constructor(message: string, data: unknown = null) {
    super(400, message, data);
  }
}

export class Unauthorized extends AppError {
  constructor(message: string) {
    super(401, message);
  }
}

export class OtpRequired extends AppError {
  constructor(message = 'Invalid 2FA code') {
    super(402, message);
  }
}

export class Forbidden extends AppError {
  constructor(message = 'permission denied') {
    super(403, message);
  }
}

export class NotFound extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}

export class TooManyRequests extends AppError {
  constructor(message: string) {
    super(429, message);
  }
}

/** A failure the original reports with code 500 and its own text (e.g. `object not found`). */
export class ServerError extends AppError {
  constructor(message: string, data: unknown = null) {
    super(500, message, data);
  }
}

/** Raised while reading config.json or the environment; the CLI prints it and exits non-zero. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
