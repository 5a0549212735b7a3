/**
 * Progress of a job whose total is not known in advance (an index build walks the tree as it
 * goes): on a terminal, one line redrawn in place with a moving bar, the count and the rate;
 * otherwise (a pipe, a log file) a plain line whenever the count changed, at most every
 * `plainEveryMs`.
 */
export class ProgressLine {
  private readonly started = Date.now();
  private frame = 0;
  private lastPlain = 0;
  private lastCount = -1;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly label: string,
    private readonly plainEveryMs = 2000,
  ) {}

  private get tty(): boolean {
    return Boolean(this.out.isTTY);
  }

  update(count: number): void {
    const secs = (Date.now() - this.started) / 1000;
    const rate = secs > 0 ? Math.round(count / secs) : 0;
    if (this.tty) {
      const width = 24;
      const pos = this.frame++ % (2 * (width - 4));
      const at = pos < width - 4 ? pos : 2 * (width - 4) - pos;
      const bar = `${' '.repeat(at)}====${' '.repeat(width - 4 - at)}`;
      this.out.write(`\r[${bar}] ${this.label}: ${count.toLocaleString('en-US')} (${rate}/s, ${secs.toFixed(0)}s)\x1b[K`);
      return;
    }
    if (count === this.lastCount || Date.now() - this.lastPlain < this.plainEveryMs) return;
    this.lastPlain = Date.now();
    this.lastCount = count;
    this.out.write(`${this.label}: ${count} (${rate}/s)\n`);
  }

  /** The closing line (on a terminal it replaces the bar). */
  done(message: string): void {
    this.out.write(this.tty ? `\r${message}\x1b[K\n` : `${message}\n`);
  }
}
