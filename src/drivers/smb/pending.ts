// node-smb2 resolves a request with the server's interim STATUS_PENDING answer (MS-SMB2 3.3.4.2:
// a server may answer a READ or WRITE it serves asynchronously first with an interim response,
// then with the final one under the same message id), so the caller got an empty READ. This
// makes a client wait for the final answer instead.

const STATUS_PENDING = 0x00000103;
const STATUS_SUCCESS = 0;

interface Response {
  header: { status: number; messageId: bigint };
}

/** The parts of node-smb2's Client this touches. */
export interface PendingAwareClient {
  send(request: unknown): Promise<Response>;
  responseMap: Map<bigint, Response>;
  responseCallbackMap: Map<bigint, (r: Response) => void>;
  requestTimeout: number;
}

/** Final answers that count as success (the library's own list, less the interim one). */
const OK = new Set([STATUS_SUCCESS, 0xc0000016 /* MORE_PROCESSING_REQUIRED */, 0xc0000128 /* FILE_CLOSED */]);

function finalAnswer(client: PendingAwareClient, id: bigint): Promise<Response> {
  return new Promise((resolve, reject) => {
    const done = (r: Response) => {
      clearTimeout(timer);
      if (r.header.status === STATUS_PENDING) {
        // Another interim answer: keep waiting.
        client.responseCallbackMap.set(id, done);
        return;
      }
      if (OK.has(r.header.status)) resolve(r);
      else reject(r);
    };
    const timer = setTimeout(() => {
      client.responseCallbackMap.delete(id);
      reject(new Error(`request_timeout: no final answer to message ${id}`));
    }, client.requestTimeout);
    const early = client.responseMap.get(id);
    if (early) {
      client.responseMap.delete(id);
      done(early);
    } else client.responseCallbackMap.set(id, done);
  });
}

/** Makes every request of `client` resolve with the final answer, never an interim STATUS_PENDING. */
export function awaitFinalAnswers(client: PendingAwareClient): void {
  const send = client.send.bind(client);
  client.send = async (request) => {
    const r = await send(request);
    return r.header.status === STATUS_PENDING ? finalAnswer(client, r.header.messageId) : r;
  };
}
