import { S3Error } from './errors.js';

/**
 * Every query sub-resource of the S3 REST API (the API reference's operations on a bucket or
 * an object that a query name selects). A request naming one is that operation and never the
 * plain object or bucket operation of its method: the server answers the ones it implements
 * (server.ts, SUBRESOURCE_HANDLERS) and `501 NotImplemented` for every other, so a PUT of
 * `?policy` or a DELETE of `?tagging` can never write or delete an object.
 */
export const SUBRESOURCES: ReadonlySet<string> = new Set([
  'accelerate',
  'acl',
  'analytics',
  'attributes',
  'cors',
  'delete',
  'encryption',
  'intelligent-tiering',
  'inventory',
  'legal-hold',
  'lifecycle',
  'location',
  'logging',
  'metadataConfiguration',
  'metadataInventoryTable',
  'metadataJournalTable',
  'metadataTable',
  'metrics',
  'notification',
  'object-lock',
  'ownershipControls',
  'partNumber',
  'policy',
  'policyStatus',
  'publicAccessBlock',
  'renameObject',
  'replication',
  'requestPayment',
  'restore',
  'retention',
  'select',
  'session',
  'tagging',
  'torrent',
  'uploadId',
  'uploads',
  'versioning',
  'versions',
  'website',
]);

/** Sub-resources that are parameters of another one when both are given (UploadPart: `?partNumber&uploadId`). */
const PARAMETER_OF: Record<string, string> = { partNumber: 'uploadId' };

/**
 * The sub-resource a query names, or undefined for the plain operation. Two at once (other
 * than a pair such as `uploadId` with its `partNumber`) name no operation: InvalidRequest.
 */
export function subresourceOf(query: ReadonlyMap<string, string>): string | undefined {
  const named = [...query.keys()].filter((k) => SUBRESOURCES.has(k));
  const main = named.filter((k) => !(PARAMETER_OF[k] !== undefined && named.includes(PARAMETER_OF[k]!)));
  if (main.length > 1) throw new S3Error(400, 'InvalidRequest', `A request names one sub-resource, not ${main.map((k) => `?${k}`).join(' and ')}.`);
  return main[0];
}

export const notImplemented = (what: string) => new S3Error(501, 'NotImplemented', `A header or sub-resource you provided implies functionality that is not implemented: ${what}.`);
