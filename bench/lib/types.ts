/** One line of the final table: `| benchmark | atrium | peer | ratio | target | met |`. */
export interface SummaryRow {
  benchmark: string;
  /** Atrium's figure (number in `unit`), or null when it could not be measured. */
  atrium: number | null;
  /** Name of what Atrium is compared with (`nginx`, `rclone`, `raw readdir+stat`), if anything. */
  peerName?: string;
  peer?: number | null;
  unit: string;
  /** atrium / peer, when both are known. */
  ratio?: number | null;
  /** Human-readable target, e.g. `≤ 2.00× raw`, `< 50 ms`; empty when informative only. */
  target?: string;
  /** true / false when a target exists and both figures are known; null otherwise. */
  met?: boolean | null;
  /** Why the figure is missing (error of Atrium or of a peer). */
  error?: string;
}

/** A detail table printed before the summary (e.g. every listing run with p50/p99/min/max). */
export interface DetailTable {
  title: string;
  columns: string[];
  rows: Array<Array<string | number | null>>;
}

export interface BenchError {
  benchmark: string;
  /** `atrium`, `nginx`, `rclone`, `raw`, `setup`… */
  subject: string;
  message: string;
}

export interface AreaResult {
  area: string;
  title: string;
  startedAt: string;
  finishedAt: string;
  durationS: number;
  quick: boolean;
  environment: Record<string, unknown>;
  parameters: Record<string, unknown>;
  summary: SummaryRow[];
  details: DetailTable[];
  errors: BenchError[];
  /** Raw measurements (samples in ms, MB/s per repetition, RSS samples…), for later analysis. */
  raw: Record<string, unknown>;
}

export interface BenchContext {
  quick: boolean;
  /** Aborted on Ctrl-C or when the area's time budget is spent. */
  signal: AbortSignal;
  /** Progress line on stderr (stdout carries the tables). */
  log(msg: string): void;
  /** Result of `npm run build` (null = ok), so Atrium benchmarks can say why they did not run. */
  atriumBuildError: string | null;
  repoRoot: string;
}

export interface BenchModule {
  area: string;
  title: string;
  /** Time budget of the whole area in ms (full / quick). */
  budgetMs(quick: boolean): number;
  /** Run only when named (`npm run bench -- soak`), not as part of a plain `npm run bench`. */
  onlyWhenNamed?: boolean;
  run(ctx: BenchContext, result: AreaResult): Promise<void>;
}
