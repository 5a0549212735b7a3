import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ListingCache } from '../fs/cache.js';
import { DONE_STATES, STATE, type TaskManager } from '../tasks/manager.js';
import { TASK_KIND_NAMES } from '../tasks/kinds.js';

const STATE_NAMES = Object.fromEntries(Object.entries(STATE).map(([name, n]) => [n, name.toLowerCase()])) as Record<number, string>;

/** Latency buckets in seconds: from a cached listing (sub-millisecond) to a long upload. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the thumbnail service did since start, and the files waiting for it (thumbs/service.ts). */
export interface ThumbCounts {
  made: number;
  hits: number;
  failed: number;
  waiting: number;
}

export interface RequestSample {
  method: string;
  route: string;
  /** HTTP status. */
  status: number;
  /** The envelope's `code` for API answers, else the HTTP status. */
  code: number;
  seconds: number;
  bytesIn: number;
  bytesOut: number;
}

/**
 * The process's Prometheus metrics, in a registry of its own (nothing global): requests by
 * route and code, latency, bytes in and out, tasks by state (cluster-wide when tasks are
 * shared), driver errors, the listing cache, and the process's memory under the names Node
 * dashboards know (read at scrape time: no timers).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status' | 'code'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly bytesIn: Counter<'route'>;
  private readonly bytesOut: Counter<'route'>;
  private readonly driverErrors: Counter<'driver' | 'op'>;
  private served = 0;

  /** `dbQueries`: queries the database answered since start; `thumbs`: the thumbnail service's counts. */
  constructor(tasks: TaskManager, cache: ListingCache, dbQueries: () => number, thumbs: () => ThumbCounts) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'atrium_http_requests_total', help: 'HTTP requests by route, HTTP status and API envelope code', labelNames: ['method', 'route', 'status', 'code'], registers });
    this.latency = new Histogram({ name: 'atrium_http_request_duration_seconds', help: 'Time from request to the end of the response', labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS, registers });
    this.bytesIn = new Counter({ name: 'atrium_http_received_bytes_total', help: 'Bytes received on the connection per request (headers and body)', labelNames: ['route'], registers });
    this.bytesOut = new Counter({ name: 'atrium_http_sent_bytes_total', help: 'Bytes sent on the connection per response (headers and body)', labelNames: ['route'], registers });
    this.driverErrors = new Counter({ name: 'atrium_driver_errors_total', help: 'Failed storage driver operations (not counting missing files or canceled work)', labelNames: ['driver', 'op'], registers });
    new Gauge({
      name: 'atrium_tasks',
      help: 'Tasks by kind and state (every process sharing the database, in cluster mode)',
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const kind of TASK_KIND_NAMES) {
          const counts = new Map<number, number>();
          for (const t of await tasks.listShared(kind)) counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
          for (const state of Object.values(STATE)) {
            // Done states only when present, so an idle server exports a short list.
            if (DONE_STATES.has(state) && !counts.get(state)) continue;
            this.set({ kind, state: STATE_NAMES[state]! }, counts.get(state) ?? 0);
          }
        }
      },
    });
    this.gauge('process_resident_memory_bytes', 'Resident memory size in bytes', () => process.memoryUsage.rss());
    this.gauge('nodejs_heap_size_total_bytes', 'V8 heap reserved, in bytes', () => process.memoryUsage().heapTotal);
    this.gauge('nodejs_heap_size_used_bytes', 'V8 heap in use (live and not yet collected), in bytes', () => process.memoryUsage().heapUsed);
    this.gauge('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript (buffers included), in bytes', () => process.memoryUsage().external);
    new Counter({
      name: 'atrium_db_queries_total',
      help: 'Queries the database answered (requests, tasks and upkeep)',
      registers,
      collect() {
        this.reset();
        this.inc(dbQueries());
      },
    });
    const served = () => this.served;
    this.gauge('atrium_db_queries_per_request', 'Database queries since start divided by HTTP requests since start (steady state: ~0, users and sessions are cached)', () => {
      const n = served();
      return n === 0 ? 0 : dbQueries() / n;
    });
    this.gauge('atrium_listing_cache_folders', 'Folder listings held in the listing cache', () => cache.size().folders);
    this.gauge('atrium_listing_cache_objects', 'Entries held by the cached folder listings', () => cache.size().objects);
    this.total('atrium_thumbnails_made_total', 'Thumbnails the thumbnail service made', () => thumbs().made);
    this.total('atrium_thumbnails_cache_hits_total', 'Thumbnail requests answered from the thumbnail cache', () => thumbs().hits);
    this.total('atrium_thumbnails_failed_total', 'Thumbnails that could not be made (corrupt, too many pixels, past the time limit, no cover)', () => thumbs().failed);
    this.gauge('atrium_thumbnails_waiting', 'Files waiting for a thumbnail (asked for, offered by listings, or being made)', () => thumbs().waiting);
  }

  /** A counter kept elsewhere, read when scraped. */
  private total(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /** Gauges read when scraped. */
  private gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  request(s: RequestSample): void {
    this.served++;
    this.requests.inc({ method: s.method, route: s.route, status: String(s.status), code: String(s.code) });
    this.latency.observe({ method: s.method, route: s.route }, s.seconds);
    if (s.bytesIn > 0) this.bytesIn.inc({ route: s.route }, s.bytesIn);
    if (s.bytesOut > 0) this.bytesOut.inc({ route: s.route }, s.bytesOut);
  }

  driverError(driver: string, op: string): void {
    this.driverErrors.inc({ driver, op });
  }

  /** The text exposition format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
