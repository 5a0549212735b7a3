import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { AbortError } from '../errors.js';

/** Why a tool's run failed, without its command line (it names host paths and URLs). */
export class ToolError extends Error {
  constructor(
    readonly tool: string,
    message: string,
  ) {
    super(`${tool}: ${message}`);
    this.name = 'ToolError';
  }
}

export interface RunOptions {
  /** Piped to the tool's standard input (errors of the pipe end the run). */
  stdin?: Readable;
  /** The run is killed (SIGKILL) past this many milliseconds. */
  timeoutMs: number;
  /** Standard output past this many bytes kills the run. */
  maxOutput: number;
  signal?: AbortSignal;
}

/**
 * Runs a tool as a child process (never on the event loop) and gives its standard output: killed
 * past its time limit, on too much output, or when `signal` aborts. A missing tool says so.
 */
export function runTool(tool: string, args: string[], opts: RunOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new AbortError());
    const child = spawn(tool, args, { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let errText = '';
    let failure: Error | undefined;
    const stop = (err: Error) => {
      failure ??= err;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new ToolError(tool, `no result within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const onAbort = () => stop(new AbortError());
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > opts.maxOutput) stop(new ToolError(tool, 'output too large'));
      else out.push(b);
    });
    child.stderr!.on('data', (b: Buffer) => {
      if (errText.length < 2000) errText += b.toString('utf8');
    });
    if (opts.stdin && child.stdin) {
      // The tool may stop reading early (it has what it needs): a closed pipe is no failure.
      child.stdin.on('error', () => {});
      opts.stdin.on('error', (err) => stop(err));
      opts.stdin.pipe(child.stdin);
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= err.code === 'ENOENT' ? new ToolError(tool, 'is not installed') : err;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      opts.stdin?.destroy();
      if (failure) return reject(failure);
      if (code !== 0) return reject(new ToolError(tool, `failed (${code}): ${firstLine(errText)}`));
      resolve(Buffer.concat(out));
    });
  });
}

const firstLine = (text: string) => text.split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 200) ?? 'no message';
