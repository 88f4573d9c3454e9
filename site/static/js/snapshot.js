// Python's memory after the first full boot, kept so that every later page, reload or tab restores it (well under a
// second) instead of starting CPython again (seconds). One snapshot is kept per site, under the key of the Pyodide
// build and the sim zip that made it: a redeploy or a Pyodide upgrade changes the key, and a snapshot under another
// key is never restored. Every failure here (no storage, private mode, quota, another tab holding the file, a
// damaged file) reads as "no snapshot": the caller boots normally and saves a new one.
//
// Where it is kept: a file in the origin private file system, where the browser can write one (Chromium, Firefox,
// Safari 26 and later): a 4-byte length, a JSON header {key, length, digest} of that length, then the memory. A
// dedicated worker reads it with a synchronous access handle: a plain read into this thread's memory, with none of
// the copying through the browser process that an IndexedDB value of 31 MB costs while a page is loading. A shared
// worker has no such handles, and reads the file as a File and writes it with a writable stream. Where no file can
// be written (WebKit without the file system, Safari before 26 in a shared worker, which lacks createWritable), the
// same header and memory go to IndexedDB instead: slower to read than the file, still a fraction of a full boot.
// The site's root (this file is static/js-<hash>/snapshot.js): sites that share an origin (user.github.io/a/
// and /b/) keep a file each.
const SITE = new URL("../../", import.meta.url).pathname;
const FILE = `inferlab ${encodeURIComponent(SITE)}.snapshot`;
const LENGTH_BYTES = 4;

async function digest(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).join(",");
}

async function openFile(options) {
  const root = await navigator.storage.getDirectory();
  return root.getFileHandle(FILE, options);
}

const SYNC_ACCESS = typeof FileSystemSyncAccessHandle !== "undefined"; // dedicated workers only

// The file as {size, read(at, length) -> Promise<Uint8Array>, close()}, through whichever access this worker has.
async function openReader(file) {
  if (!SYNC_ACCESS) {
    const blob = await file.getFile();
    const read = async (at, length) => new Uint8Array(await blob.slice(at, at + length).arrayBuffer());
    return { size: blob.size, read, close() {} };
  }
  // Read-only handles can be held by several tabs at once (browsers without the option take a writable one).
  const handle = await file.createSyncAccessHandle({ mode: "read-only" });
  const read = async (at, length) => {
    const data = new Uint8Array(length);
    if (handle.read(data, { at }) !== length) throw new Error("the snapshot is incomplete");
    return data;
  };
  return { size: handle.getSize(), read, close: () => handle.close() };
}

async function readHeader(reader) {
  if (reader.size < LENGTH_BYTES) return null;
  const headerLength = new DataView((await reader.read(0, LENGTH_BYTES)).buffer).getUint32(0, true);
  if (reader.size < LENGTH_BYTES + headerLength) return null;
  const meta = JSON.parse(new TextDecoder().decode(await reader.read(LENGTH_BYTES, headerLength)));
  return { ...meta, offset: LENGTH_BYTES + headerLength };
}

// The snapshot saved under `key`, or null. Only its header is read before this returns; the memory arrives in
// `bytes` a task later, so that Pyodide's own downloads are under way first, and `verified` says whether it is
// whole (length and SHA-256, checked beside the restore rather than before it).
export async function findSnapshot(key) {
  return (await findInFile(key)) ?? (await findInDatabase(key));
}

// What findSnapshot returns for a header read: the memory a task later, and whether it is whole.
function later(meta, read) {
  const bytes = new Promise((resolve) => setTimeout(resolve)).then(read);
  bytes.catch(() => {}); // loadPyodide awaits it; this only keeps a failed read from being "unhandled" first
  const verified = bytes.then(async (data) => data.length === meta.length && (await digest(data)) === meta.digest,
    () => false);
  return { bytes, verified };
}

async function findInFile(key) {
  let reader = null;
  try {
    reader = await openReader(await openFile());
    const meta = await readHeader(reader);
    if (!meta || meta.key !== key || reader.size !== meta.offset + meta.length) {
      reader.close();
      return null;
    }
    const opened = reader;
    reader = null;
    return later(meta, async () => {
      try {
        return await opened.read(meta.offset, meta.length);
      } finally {
        opened.close();
      }
    });
  } catch {
    reader?.close();
    return null;
  }
}

// The IndexedDB copy: a database of the file's name, one store, the header under "meta" and the memory (an
// ArrayBuffer: some engines refuse Blobs in IndexedDB in private windows) under "memory".
const STORE = "snapshot";

function request(transaction, make) {
  return new Promise((resolve, reject) => {
    const asked = make(transaction.objectStore(STORE));
    asked.onsuccess = () => resolve(asked.result);
    asked.onerror = () => reject(asked.error);
  });
}

function openDatabase() {
  return new Promise((resolve, reject) => {
    const opening = indexedDB.open(FILE, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
    opening.onsuccess = () => resolve(opening.result);
    opening.onerror = () => reject(opening.error);
    opening.onblocked = () => reject(new Error("the snapshot database is held by an older page"));
  });
}

async function findInDatabase(key) {
  let database = null;
  try {
    database = await openDatabase();
    const opened = database;
    const meta = await request(opened.transaction(STORE), (store) => store.get("meta"));
    if (!meta || meta.key !== key) {
      opened.close();
      return null;
    }
    database = null;
    return later(meta, async () => {
      try {
        return new Uint8Array(await request(opened.transaction(STORE), (store) => store.get("memory")));
      } finally {
        opened.close();
      }
    });
  } catch {
    database?.close();
    return null;
  }
}

// Replace the saved snapshot: a file where one can be written, IndexedDB where none can; false when the browser
// refused both (quota, private mode, another tab reading it…).
export async function saveSnapshot(key, bytes) {
  const meta = { key, length: bytes.length, digest: await digest(bytes) };
  if (await saveInFile(meta, bytes)) {
    forgetOldSnapshot();
    forgetDatabase();
    return true;
  }
  return saveInDatabase(meta, bytes);
}

async function saveInFile(meta, bytes) {
  let handle = null;
  try {
    const header = new TextEncoder().encode(JSON.stringify(meta));
    const length = new DataView(new ArrayBuffer(LENGTH_BYTES));
    length.setUint32(0, header.length, true);
    const file = await openFile({ create: true });
    if (!SYNC_ACCESS) return await writeWhole(file, [length, header, bytes]);
    handle = await file.createSyncAccessHandle();
    handle.truncate(0);
    // A write cut short (a closed tab, a full disk) leaves a file shorter than its header says: never restored.
    handle.write(length, { at: 0 });
    handle.write(header, { at: LENGTH_BYTES });
    if (handle.write(bytes, { at: LENGTH_BYTES + header.length }) !== bytes.length) throw new Error("short write");
    handle.flush();
    return true;
  } catch {
    try {
      handle?.truncate(0); // what was written of it is of no use, and may be what filled the quota
    } catch {
      // the file stays short, and so is never restored
    }
    return false;
  } finally {
    handle?.close();
  }
}

// Without a sync handle: a writable stream, which replaces the file only once it is closed whole.
async function writeWhole(file, parts) {
  if (typeof file.createWritable !== "function") return false; // Safari before 26
  const writable = await file.createWritable();
  try {
    await writable.write(new Blob(parts));
    await writable.close();
  } catch {
    await writable.abort().catch(() => {});
    return false;
  }
  return true;
}

// The memory first, then the header that makes it findable, each in a transaction of its own: a save cut short
// leaves no header, or one whose length or digest the memory does not match, and is never restored.
async function saveInDatabase(meta, bytes) {
  let database = null;
  try {
    database = await openDatabase();
    const done = (transaction) => new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onerror = transaction.onabort = () => reject(transaction.error);
    });
    const clearing = database.transaction(STORE, "readwrite");
    clearing.objectStore(STORE).clear();
    await done(clearing);
    const memory = database.transaction(STORE, "readwrite");
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    memory.objectStore(STORE).put(whole ? bytes.buffer : bytes.slice().buffer, "memory");
    await done(memory);
    const header = database.transaction(STORE, "readwrite");
    header.objectStore(STORE).put(meta, "meta");
    await done(header);
    return true;
  } catch {
    return false;
  } finally {
    database?.close();
  }
}

function forgetDatabase() {
  try {
    self.indexedDB?.deleteDatabase(FILE);
  } catch {
    // no IndexedDB here: nothing was kept in it
  }
}

// Builds before December 2026 kept their snapshot (31 MB) in IndexedDB: that copy is never read again.
function forgetOldSnapshot() {
  self.indexedDB?.deleteDatabase("inferlab");
}

export async function forgetSnapshot() {
  forgetDatabase();
  try {
    const root = await navigator.storage.getDirectory();
    await root.removeEntry(FILE);
  } catch {
    // nothing to forget, or no file system: a normal boot follows either way
  }
}
