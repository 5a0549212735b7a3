// The API envelope's code of an error: the default of its kind (API_CODE in src/errors.ts), unless
// OpenList's wire answers the case with another code. Those cases are declared here, next to the
// routes (OPENLIST_CODES: the cases OpenList's handlers answer alike wherever they arise) or on
// the route itself (`codes` of server/route.ts apiRoute), never at the throw site.

import { WrongArchivePassword } from '../archive/reader.js';
import { StorageError } from '../drivers/types.js';
import { type ApiCodes, type AppError, apiCodeOf, Missing } from '../errors.js';
import { NotAFile } from '../fs/fs.js';
import { DeleteRoot, FileInTheWay } from '../fs/write.js';
import { ShareRefused } from '../shares/service.js';
import { ShareReadFailed } from '../view/share.js';
import { SystemFile } from '../view/view.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's own API codes for cases of a kind (before OPENLIST_CODES and API_CODE). */
    apiCodes?: ApiCodes;
  }
}

/**
 * OpenList passes what goes wrong under its fs, share and archive handlers to the client with
 * code 500 and the text (common.ErrorResp(c, err, 500)): a missing object, a refusal of the
 * storage, a file in the way of a folder, the root of a storage removed, a system file, a folder
 * where a file is needed; a share that is gone and a failed read of one; and a wrong archive
 * password with code 202. The checks its handlers make themselves (permission, an existing name
 * without overwrite, a folder password) keep their kind's code.
 */
export const OPENLIST_CODES: ApiCodes = [
  [Missing, 500],
  [StorageError, 500],
  [FileInTheWay, 500],
  [DeleteRoot, 500],
  [SystemFile, 500],
  [NotAFile, 500],
  [ShareRefused, 500],
  [ShareReadFailed, 500],
  [WrongArchivePassword, 202],
];

/** The code of `err` answered by a route declaring `routeCodes`. */
export const envelopeCodeOf = (err: AppError, routeCodes: ApiCodes = []): number => apiCodeOf(err, [...routeCodes, ...OPENLIST_CODES]);
