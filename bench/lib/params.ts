// A benchmark's parameters from the environment (BENCH_*).

/** A positive number from the environment variable `name`, or undefined when it is unset or empty. */
export function envInt(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(v)}`);
  return n;
}
