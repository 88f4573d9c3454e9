// Python's memory after the first full boot, kept in IndexedDB so that every later page, reload or tab restores
// it (about 0.4 s) instead of starting CPython again (seconds). One snapshot is kept, under the key of the Pyodide
// build and the sim zip that made it: a redeploy or a Pyodide upgrade changes the key, and a snapshot under another
// key is never restored. Every failure here (no IndexedDB, private mode, quota, a damaged record) reads as "no
// snapshot": the caller boots normally and saves a new one.

const DB = "inferlab";
const STORE = "python";
const META = "snapshot"; // {key, length, digest}: read first, and small
const BYTES = "snapshot-bytes"; // a Blob of Python's memory

function request(idbRequest) {
  return new Promise((resolve, reject) => {
    idbRequest.onsuccess = () => resolve(idbRequest.result);
    idbRequest.onerror = () => reject(idbRequest.error);
  });
}

function open() {
  const opening = indexedDB.open(DB, 1);
  opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
  return request(opening);
}

async function withStore(mode, use) {
  const db = await open();
  try {
    const transaction = db.transaction(STORE, mode);
    const done = new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error("transaction aborted"));
    });
    const result = await use(transaction.objectStore(STORE));
    await done;
    return result;
  } finally {
    db.close();
  }
}

async function digest(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).join(",");
}

// The snapshot saved under `key`, or null. Only its small description is read before this returns: the bytes
// (31 MB, kept as a Blob so that reading them is file I/O, not a structured clone on this thread) arrive in
// `bytes` while Pyodide loads its own files, and `verified` says whether they are whole (length and SHA-256,
// checked beside the restore rather than before it).
export async function findSnapshot(key) {
  try {
    const meta = await withStore("readonly", (store) => request(store.get(META)));
    if (!meta || meta.key !== key) return null;
    const bytes = withStore("readonly", (store) => request(store.get(BYTES))).then(async (stored) => {
      const data = stored instanceof Blob ? new Uint8Array(await stored.arrayBuffer()) : null;
      if (!data || data.length !== meta.length) throw new Error("the snapshot is incomplete");
      return data;
    });
    bytes.catch(() => {}); // loadPyodide awaits it; this only keeps a failed read from being "unhandled" first
    const verified = bytes.then(async (stored) => (await digest(stored)) === meta.digest, () => false);
    return { bytes, verified };
  } catch {
    return null;
  }
}

// Replace the saved snapshot; false when the browser refused (quota, private mode…).
export async function saveSnapshot(key, bytes) {
  try {
    const meta = { key, length: bytes.length, digest: await digest(bytes) };
    await withStore("readwrite", (store) => Promise.all([
      request(store.put(new Blob([bytes]), BYTES)),
      request(store.put(meta, META)),
    ]));
    return true;
  } catch {
    return false;
  }
}

export async function forgetSnapshot() {
  try {
    await withStore("readwrite", (store) => Promise.all([request(store.delete(META)), request(store.delete(BYTES))]));
  } catch {
    // nothing to forget, or no IndexedDB: a normal boot follows either way
  }
}
