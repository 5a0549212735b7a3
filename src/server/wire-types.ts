// The wire's JSON objects as TypeScript types, inferred from their zod shapes (shapes.ts), for
// the web UI: web/src imports them with `import type` only, so neither zod nor any server code
// reaches its bundle, and a field changed in a shape breaks `npm run typecheck:web` (run by
// test/unit/web-types.test.ts) where the web UI reads it.

import type { z } from 'zod';
import type {
  appPasswordShape,
  auditEventShape,
  archiveMetaShape,
  archiveTreeShape,
  getShape,
  groupShape,
  listShape,
  metaShape,
  objShape,
  passkeyShape,
  s3KeyShape,
  sessionShape,
  settingShape,
  shareShape,
  sshKeyShape,
  storageShape,
  taskShape,
  uploadSnapshotShape,
  userShape,
} from './shapes.js';

import type { trashEntryShape } from './routes/fs-trash.js';
import type { wopiSessionShape } from './routes/wopi.js';
import type { syncJobShape, syncReportShape, syncRunShape } from './routes/admin-sync.js';
import type { aboutShape } from './routes/admin-about.js';
import type { importReportShape } from './backup-report.js';

export type { TaskKind } from '../tasks/kinds.js';

/** A file or folder (wire-api.md §6.1). */
export type Obj = z.infer<typeof objShape>;
/** `/api/fs/list`. */
export type ListResp = z.infer<typeof listShape>;
/** `/api/fs/get`. */
export type GetResp = z.infer<typeof getShape>;
/** `/api/me` and `/api/admin/user/*`. */
export type User = z.infer<typeof userShape>;
/** `/api/admin/group/*`. */
export type Group = z.infer<typeof groupShape>;
/** `/api/me/sessions`, `/api/admin/session/list`. */
export type Session = z.infer<typeof sessionShape>;
/** `/api/admin/storage/*`. */
export type Storage = z.infer<typeof storageShape>;
/** `/api/admin/meta/*`. */
export type Meta = z.infer<typeof metaShape>;
/** An entry of an archive's tree; its `children` are typed loosely (zod shapes are not recursive here). */
export type ArchiveTreeEntry = z.infer<typeof archiveTreeShape>;
/** `/api/fs/archive/meta`. */
export type ArchiveMeta = z.infer<typeof archiveMetaShape>;
/** `/api/task/<kind>/*`, `/api/admin/task/<kind>/*`. */
export type Task = z.infer<typeof taskShape>;
/** `/api/admin/setting/*`. */
export type Setting = z.infer<typeof settingShape>;
/** `/api/me/sshkey/list`, `/api/admin/user/sshkey/list`. */
export type SshKey = z.infer<typeof sshKeyShape>;
/** `/api/me/s3key/list` (the secret is never listed). */
export type S3Key = z.infer<typeof s3KeyShape>;
/** `/api/me/app_password/list` (the password is never listed). */
export type AppPassword = z.infer<typeof appPasswordShape>;
/** `/api/authn/getcredentials`. */
export type Passkey = z.infer<typeof passkeyShape>;
/** `/api/share/*`. */
export type Share = z.infer<typeof shareShape>;
/** An upload of the chunked protocol (`/api/fs/multipart/*`). */
export type UploadSnapshot = z.infer<typeof uploadSnapshotShape>;
/** An entry of a storage's trash (`/api/fs/trash/list`). */
export type TrashEntry = z.infer<typeof trashEntryShape>;
/** `/api/wopi/create-session`: where and with which token the page opens a document in an online office. */
export type WopiSession = z.infer<typeof wopiSessionShape>;
/** `/api/admin/sync/*`: a sync job, one of its runs, and a run's report (or a dry run's plan). */
export type SyncJob = z.infer<typeof syncJobShape>;
export type SyncRun = z.infer<typeof syncRunShape>;
export type SyncReport = z.infer<typeof syncReportShape>;
/** `GET /api/admin/about`. */
export type About = z.infer<typeof aboutShape>;
/** `POST /api/admin/backup/import`. */
export type ImportReport = z.infer<typeof importReportShape>;

/** The audit log's operation names and results (audit/events.ts, errors.ts), for the audit and hooks pages. */
export type { EventOp, EventFront } from '../audit/events.js';
export type { ErrorKind } from '../errors.js';
export type AuditEvent = z.infer<typeof auditEventShape>;
