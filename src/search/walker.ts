import path from 'node:path';
import type { Obj } from '../drivers/types.js';
import type { Logger } from '../logger.js';
import { type TreeSource, isIgnored } from './tree.js';
import { type NodeBatch, nodeOf } from './writer.js';

/** Thrown inside a walk when it was asked to stop (or the process is closing). */
export class WalkStopped extends Error {
  constructor() {
    super('index build stopped');
  }
}

const byName = (a: Obj, b: Obj) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
export const childPath = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);

export interface WalkOptions {
  source: TreeSource;
  batch: NodeBatch;
  ignored: string[];
  /** Entries deeper than this many path segments are left out. */
  maxDepth: number;
  log: Logger;
  shouldStop(): boolean;
  /** Called when the walk starts inserting a folder's entries (the resume cursor). */
  onFolder?(dir: string): void;
}

/**
 * Walks a folder tree depth first in name order, indexing the entries of each folder before
 * going down into its sub-folders. Memory holds the listings on the current path only.
 *
 * `resume` is the path of the folder whose entries were being written when an earlier walk
 * stopped: every folder before it in walk order is complete (their subtrees are skipped without
 * listing), its own rows are written again, and everything after it is walked as new.
 */
export async function walkTree(opts: WalkOptions, dir: string, resume?: string): Promise<void> {
  const resumeAt = resume === undefined ? undefined : resume.split('/').filter(Boolean);
  const base = dir.split('/').filter(Boolean).length;
  await walkFolder(opts, dir, base, resumeAt?.slice(base));
}

async function walkFolder(opts: WalkOptions, dir: string, depth: number, resume: string[] | undefined): Promise<void> {
  if (opts.shouldStop()) throw new WalkStopped();
  if (depth >= opts.maxDepth) return;
  let objs: Obj[];
  try {
    objs = (await opts.source.list(dir)).filter((o) => !isIgnored(opts.ignored, childPath(dir, o.name))).sort(byName);
  } catch (err) {
    opts.log.warn({ err, path: dir }, 'index: listing failed, folder skipped');
    return;
  }
  // Folders on the way to the resume point already have their entries indexed.
  const insert = resume === undefined || resume.length === 0;
  if (insert) {
    opts.onFolder?.(dir);
    for (const o of objs) await opts.batch.add(nodeOf(dir, o));
  }
  for (const o of objs) {
    if (!o.isDir) continue;
    if (resume !== undefined && resume.length > 0) {
      const next = resume[0]!;
      if (o.name < next) continue;
      await walkFolder(opts, childPath(dir, o.name), depth + 1, o.name === next ? resume.slice(1) : undefined);
      continue;
    }
    await walkFolder(opts, childPath(dir, o.name), depth + 1, undefined);
  }
}

export const parentOf = (p: string): string => path.posix.dirname(p);
export const baseOf = (p: string): string => path.posix.basename(p);
