// The service worker: a lesson visited once opens again without a network, widgets working. build.py writes this
// file to the site's root with BUILD: the build's version and a content hash for each file under static/, vendor/
// and py/ (a new build is a new sw.js, which the browser installs at once).
//
// - Pages, and files whose name does not carry their content's hash (the search index), are fetched from the
//   network first and kept for when it is down: a new deploy is seen as soon as it is online.
// - What every page needs (BUILD.files: Pyodide, the simulator, the scripts, each language's offline page) is
//   fetched at install, on a first visit. What a page asks for only when it is used (BUILD.later: the search index,
//   plotly.js) is kept as it is fetched, and all of it once the student reads on (a second page kept) or searches
//   (builder/offline.py says why): from then on search and every figure work offline too.
// - A page it can neither fetch nor find kept is answered with the offline page of its language (BUILD.offline):
//   it says the page is not saved and lists those that are (static/js/saved.js asks for them, "pages").
// - Files whose name carries their hash (site-<hash>.css, the scripts in js-<hash>/, py/sim-<hash>.zip and
//   py/stdlib-<hash>.zip) and the pinned vendor/ packages come from the cache first: they never change under
//   a name, and a page asks for those of its own build.
// - Each build of the site has its own cache (other sites on the origin have theirs, untouched); installing
//   copies the files whose hash is unchanged from the old one (a redeploy does not download Pyodide again) and
//   fetches the rest; once it is active, the pages the old one kept are fetched again into it and the old
//   caches are deleted.
const BUILD = /* BUILD */ { version: "dev", files: {}, later: {} };

const ROOT = new URL("./", self.location.href);
// Caches are named by the site's folder as well as its build: two sites on one origin (two courses on one
// github.io account) each keep, and clean up, their own. A path has no space, so one site's prefix is never the
// start of another's name.
const PREFIX = `inferlab ${ROOT.pathname} `;
const CACHE = `${PREFIX}${BUILD.version}`;
const UNNAMED_PREFIX = "inferlab-"; // the caches of builds before that: "inferlab-<version>", whichever site
const MANIFEST_KEY = "inferlab-build.json"; // this cache's BUILD, kept in it for the next build to compare
const IMMUTABLE = /^(vendor\/|static\/site-[0-9a-f]+\.css$|static\/js-[0-9a-f]+\/|py\/[a-z]+-[0-9a-f]+\.zip$)/;

function sitePath(url) {
  return url.href.startsWith(ROOT.href) ? url.href.slice(ROOT.href.length).split(/[?#]/)[0] : null;
}

// A page's address, as kept: the site root, a folder, or an .html file.
function isPage(path) {
  return path !== null && (path === "" || path.endsWith("/") || path.endsWith(".html"));
}

// The names of this site's caches from other builds. An older build's cache, named before caches carried the
// site's folder, is this site's when everything in it is under this site's root.
async function olderCaches() {
  const names = [];
  for (const name of await caches.keys()) {
    if (name === CACHE) continue;
    if (name.startsWith(PREFIX)) names.push(name);
    else if (name.startsWith(UNNAMED_PREFIX)) {
      const requests = await (await caches.open(name)).keys();
      if (requests.every((request) => sitePath(new URL(request.url)) !== null)) names.push(name);
    }
  }
  return names;
}

async function previousCopies() {
  const copies = [];
  for (const name of await olderCaches()) {
    const cache = await caches.open(name);
    const manifest = await cache.match(new URL(MANIFEST_KEY, ROOT));
    if (manifest) {
      const { files = {}, later = {} } = await manifest.json();
      copies.push({ cache, files: { ...files, ...later } });
    }
  }
  return copies;
}

// Puts each of `entries` ({path: hash}) into `cache` where it is missing: from an older build's cache where its
// hash is the same, else, if `download`, from the network.
async function fill(cache, entries, previous, download) {
  await Promise.all(Object.entries(entries).map(async ([path, hash]) => {
    const url = new URL(path, ROOT);
    if (await cache.match(url)) return;
    for (const old of previous) {
      const response = old.files[path] === hash && (await old.cache.match(url));
      if (response) return cache.put(url, response);
    }
    if (!download) return;
    // Revalidated, not taken from the HTTP cache: an unhashed name may hold older bytes there.
    const response = await fetch(url, { cache: "no-cache" });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return cache.put(url, response);
  }));
}

async function precache() {
  const cache = await caches.open(CACHE);
  const previous = await previousCopies();
  await fill(cache, BUILD.files, previous, true);
  await fill(cache, BUILD.later ?? {}, previous, false); // what an older build had kept of them comes along
  await cache.put(new URL(MANIFEST_KEY, ROOT), new Response(JSON.stringify(BUILD), {
    headers: { "Content-Type": "application/json" },
  }));
}

// The files kept on use, all of them, once the student reads on or searches. A failure (offline, a redeploy
// under way) is only a missed chance: the next page kept tries again.
async function keepAll() {
  const cache = await ownCache();
  if (cache) await fill(cache, BUILD.later ?? {}, [], true).catch(() => {});
}

self.addEventListener("install", (event) => {
  event.waitUntil(precache().then(() => self.skipWaiting()));
});

// The pages kept by an older build come along, fetched again so that they match this build's files (or, if the
// network is down, as they were); then the older caches go.
async function bringPagesAlong() {
  const cache = await caches.open(CACHE);
  for (const name of await olderCaches()) {
    const old = await caches.open(name);
    for (const request of await old.keys()) {
      if (!isPage(sitePath(new URL(request.url)))) continue;
      if (await cache.match(request)) continue;
      try {
        const response = await fetch(request, { cache: "no-cache" });
        if (response.ok) await cache.put(request, response);
      } catch {
        await cache.put(request, await old.match(request));
      }
    }
    await caches.delete(name);
  }
}

self.addEventListener("activate", (event) => {
  // Navigation preload: the browser starts fetching a page while this worker starts up, instead of after.
  const preload = self.registration.navigationPreload?.enable() ?? Promise.resolve();
  event.waitUntil(Promise.all([preload, bringPagesAlong()]).then(() => self.clients.claim()));
});

// This build's cache, or null once a newer build's worker has deleted it. Only installing makes the cache: a
// worker on its way out that opened it again would leave a copy no later build knows to delete.
async function ownCache() {
  return (await caches.has(CACHE)) ? caches.open(CACHE) : null;
}

// A copy is kept under its address without the query: a scenario link (?T=…) opens the page offline, and the
// search index's entry file, which Pagefind asks for with a new ?ts= each time, is kept once.
function keyOf(url) {
  const key = new URL(url);
  key.search = "";
  key.hash = "";
  return key;
}

// A copy is written beside the answer, not before it: the page gets its bytes while the cache takes its own.
function keep(event, cache, key, response) {
  if (cache && response.ok && response.type === "basic") event.waitUntil(cache.put(key, response.clone()));
  return response;
}

// The offline page of the language whose folder holds `url`, served at that address. Its <base> is its own
// address, so that its relative links (written for its own folder) lead where they do from there.
async function offlinePage(cache, url) {
  const path = sitePath(url);
  const entry = (BUILD.offline ?? []).find(([folder]) => path.startsWith(folder));
  const address = entry && new URL(entry[1], ROOT);
  const kept = address && (await cache?.match(address));
  if (!kept) return null;
  const html = (await kept.text()).replace("<head>", `<head>\n<base href="${address.href}">`);
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}

async function networkFirst(event) {
  const request = event.request;
  const cache = await ownCache();
  const key = keyOf(request.url);
  try {
    return keep(event, cache, key, (await event.preloadResponse) ?? (await fetch(request)));
  } catch (error) {
    const kept = (await cache?.match(key)) ?? (request.mode === "navigate" && (await offlinePage(cache, key)));
    if (kept) return kept;
    throw error;
  }
}

async function cacheFirst(event) {
  const cache = await ownCache();
  const kept = await cache?.match(event.request, { ignoreSearch: true });
  return kept ?? keep(event, cache, event.request, await fetch(event.request));
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  const path = sitePath(url);
  // Only this site's GETs; a request that asks for no storage (the dev server's rebuild poll) goes straight out.
  if (request.method !== "GET" || path === null || request.cache === "no-store") return;
  event.respondWith(IMMUTABLE.test(path) ? cacheFirst(event) : networkFirst(event));
});

// "keep": the page asks for its own address to be kept (its first visit was not under this worker). The second
// page kept is a student reading on: the files kept on use come too (after the answer: the page waits for none).
async function keepPage(url, event) {
  try {
    const cache = await ownCache();
    if (!cache) throw new Error("a newer build's service worker has taken over");
    const key = keyOf(url);
    if (!(await cache.match(key))) {
      const response = await fetch(key);
      if (response.ok) await cache.put(key, response);
    }
    if ((await pageRequests(cache)).length >= 2) event.waitUntil(keepAll());
    return { kept: true };
  } catch (error) {
    return { kept: false, message: String(error?.message ?? error) };
  }
}

// "available": whether a file of the site can be had, kept or fetched now (the page asks before it loads a script
// on use, the search index's or plotly.js: offline, a failed load would be an error in the console). A student
// searching wants search offline too (`keepTheRest`): the whole index, and the rest kept on use, come after the
// answer.
async function available(url, keepTheRest, event) {
  const key = keyOf(url);
  if (sitePath(key) === null) return { available: false };
  const cache = await ownCache();
  let found = Boolean(await cache?.match(key));
  if (!found) {
    try {
      const response = await fetch(key, { cache: "no-cache" });
      if (response.ok && cache) await cache.put(key, response.clone());
      found = response.ok;
    } catch {
      found = false;
    }
  }
  if (found && keepTheRest) event.waitUntil(keepAll());
  return { available: found };
}

// The requests of the pages kept in `cache`, the offline pages left out.
async function pageRequests(cache) {
  const offline = new Set((BUILD.offline ?? []).map(([, page]) => new URL(page, ROOT).href));
  return (await cache.keys()).filter((request) => isPage(sitePath(new URL(request.url))) && !offline.has(request.url));
}

// "pages": the pages kept for offline reading, each with its heading (its first <h1>, else its <title>, as HTML)
// and language as kept (the offline page lists them). The offline pages themselves are not among them.
async function keptPages() {
  const cache = await ownCache();
  if (!cache) return { pages: [] };
  const pages = [];
  for (const request of await pageRequests(cache)) {
    const path = sitePath(new URL(request.url));
    const html = await (await cache.match(request)).text();
    const heading = html.match(/<h1\b[^>]*>([\s\S]*?)<\/h1>/) ?? html.match(/<title>([^<]*)<\/title>/);
    pages.push({ url: request.url, title: heading?.[1] ?? path,
                 lang: html.match(/<html lang="([^"]*)"/)?.[1] ?? "" });
  }
  return { pages };
}

const ANSWERS = {
  keep: (data, event) => keepPage(data.url, event),
  available: (data, event) => available(data.url, data.keepTheRest === true, event),
  pages: keptPages,
};

// A page asks, with a MessagePort for the answer.
self.addEventListener("message", (event) => {
  const answer = ANSWERS[event.data?.type];
  if (!answer || !Object.hasOwn(ANSWERS, event.data.type)) return;
  const port = event.ports[0];
  event.waitUntil(answer(event.data, event).then((reply) => port?.postMessage(reply)));
});
